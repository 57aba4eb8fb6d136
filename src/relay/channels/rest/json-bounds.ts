/**
 * @module relay/channels/rest/json-bounds
 * Whether an upstream body is within what a `rest` stream holds (docs/protocol.md "`rest` data"):
 * nested at most so deep and about so large once written as JSON. Walked with an explicit stack,
 * not recursion, so a body nested 100,000 deep (JSON.parse reads one) is measured, not a stack
 * overflow; the walk stops at the first bound passed.
 */
import type { JsonValue } from '../../../../packages/protocol/src/protocol/messages.ts';

export interface JsonBounds {
  /** Levels of arrays and objects, the body's own included. */
  maxDepth: number;
  /** UTF-16 code units of its JSON text (bytes for ASCII), counted as JSON.stringify writes it. */
  maxLength: number;
}

/** Why `value` is beyond `bounds`, or undefined when it is within them. */
export function beyondBounds(value: JsonValue, bounds: JsonBounds): string | undefined {
  const pending: Array<{ value: JsonValue; depth: number }> = [{ value, depth: 1 }];
  let length = 0;
  for (let entry = pending.pop(); entry !== undefined; entry = pending.pop()) {
    const { value: item, depth } = entry;
    if (item === null || typeof item !== 'object') {
      length += scalarLength(item);
    } else {
      if (depth > bounds.maxDepth) return `nested deeper than ${bounds.maxDepth} levels`;
      // The brackets, and a comma between two children.
      const children = Array.isArray(item) ? item : Object.values(item);
      length += 2 + Math.max(0, children.length - 1);
      if (!Array.isArray(item)) for (const name of Object.keys(item)) length += name.length + 3;
      for (const child of children) pending.push({ value: child, depth: depth + 1 });
    }
    if (length > bounds.maxLength) return `larger than ${bounds.maxLength} bytes`;
  }
  return undefined;
}

/** A scalar's JSON length; strings without their escapes (a lower bound, close for upstream's text). */
function scalarLength(value: string | number | boolean | null): number {
  if (typeof value === 'string') return value.length + 2;
  return String(value).length;
}
