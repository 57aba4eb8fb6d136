/**
 * @module relay/channels/rest/json-patch-diff
 * The `rest` channel's diff (docs/protocol.md "`rest` data"): an RFC 6902 JSON Patch that turns one
 * upstream body into the next. Objects are compared member by member and scalars replaced, so a
 * changed field is one `replace`. Lists of records are matched by a key field, found per list
 * ({@link listKeyOf}: `id`, `activity_id`, `comment_id`, market and outcome for positions, `user_id`,
 * `username` ...): a record that changed is patched where it is, a new one is one `add`, one gone
 * one `remove`, one that moved one `move`. So an activity list with a new entry on top is one
 * `add` (and a `remove` for the entry that fell off the end), not a rewrite of every index.
 * Lists without such a key are compared index by index.
 *
 * A body is any upstream's, so the diff bounds its own work: a keyed list reordered on every poll
 * would otherwise cost a move per record and a shift of the list per move (quadratic: 5,000 records
 * held the event loop for seconds), and a body nested thousands deep would recurse as deep. Past
 * {@link MAX_DIFF_DEPTH} levels, or past a keyed list's work allowance (linear in its length), the
 * diff gives up and the caller sends the next body whole (docs/protocol.md "`rest` data").
 */
import { type PatchOperation, pointerToken } from '../../../../packages/protocol/src/protocol/json-patch.ts';
import type { JsonValue } from '../../../../packages/protocol/src/protocol/messages.ts';

type JsonObject = { [key: string]: JsonValue };

/** Levels of nesting the diff descends; a body deeper than this is sent whole. */
export const MAX_DIFF_DEPTH = 128;

/**
 * The work a keyed list's diff may do beyond visiting its records (index updates after a move or an
 * insert): this many units per record of both lists, and this many whatever the length, so a short
 * list never gives up while a reordering of a long one does, after work linear in its length.
 */
const LIST_WORK_PER_RECORD = 8;
const LIST_WORK_BASE = 10_000;

/** Thrown inside the diff when it gives up; never leaves this module. */
class TooCostly extends Error {}

/**
 * The patch from `prev` to `next`: empty when they are equal, undefined when finding it would cost
 * more than the bodies' size allows (see the module's comment): send `next` whole then.
 */
export function diffJson(prev: JsonValue, next: JsonValue): PatchOperation[] | undefined {
  const patch: PatchOperation[] = [];
  try {
    diffInto(prev, next, '', patch, 0);
  } catch (error) {
    if (error instanceof TooCostly) return undefined;
    throw error;
  }
  return patch;
}

function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function diffInto(
  prev: JsonValue,
  next: JsonValue,
  path: string,
  patch: PatchOperation[],
  depth: number,
): void {
  const bothLists = Array.isArray(prev) && Array.isArray(next);
  const bothObjects = isObject(prev) && isObject(next);
  if ((bothLists || bothObjects) && depth >= MAX_DIFF_DEPTH) throw new TooCostly();
  if (Array.isArray(prev) && Array.isArray(next)) {
    const key = listKeyOf(prev, next);
    if (key === undefined) diffByIndex(prev, next, path, patch, depth + 1);
    else diffByKey(prev, next, key, path, patch, depth + 1);
    return;
  }
  if (isObject(prev) && isObject(next)) {
    // Only a path through this object's own `__proto__` or `constructor` can reach a prototype: an
    // object with neither (almost every one) diffs straight into the patch.
    const guarded = hasUnsafeMember(prev) || hasUnsafeMember(next);
    const members: PatchOperation[] = guarded ? [] : patch;
    for (const name of Object.keys(prev))
      if (!Object.hasOwn(next, name)) members.push({ op: 'remove', path: `${path}/${pointerToken(name)}` });
    for (const [name, value] of Object.entries(next)) {
      const at = `${path}/${pointerToken(name)}`;
      if (Object.hasOwn(prev, name)) diffInto(prev[name] as JsonValue, value, at, members, depth + 1);
      else members.push({ op: 'add', path: at, value });
    }
    if (!guarded) return;
    if (members.some((operation) => reachesPrototype(operation, path)))
      patch.push({ op: 'replace', path, value: next });
    else patch.push(...members);
    return;
  }
  // Scalars that differ, or values of different kinds (containers are never ===).
  if (prev !== next) patch.push({ op: 'replace', path, value: next });
}

function hasUnsafeMember(object: JsonObject): boolean {
  return Object.hasOwn(object, '__proto__') || Object.hasOwn(object, 'constructor');
}

/**
 * Whether an operation's path (or `from`) goes through a member of the object at `path` named
 * `__proto__`, or `constructor` then `prototype`: upstream bodies are data and may have such members,
 * but stock JSON Patch libraries refuse those paths by default, and some assign through them to the
 * prototype even when allowed. The object is then replaced whole, a value they copy as it is.
 */
function reachesPrototype(operation: PatchOperation, path: string): boolean {
  const through = (pointer: string | undefined) =>
    pointer !== undefined &&
    [`${path}/__proto__`, `${path}/constructor/prototype`].some(
      (prefix) => pointer === prefix || pointer.startsWith(`${prefix}/`),
    );
  return through(operation.path) || through('from' in operation ? operation.from : undefined);
}

function diffByIndex(
  prev: JsonValue[],
  next: JsonValue[],
  path: string,
  patch: PatchOperation[],
  depth: number,
): void {
  const common = Math.min(prev.length, next.length);
  for (let i = 0; i < common; i++)
    diffInto(prev[i] as JsonValue, next[i] as JsonValue, `${path}/${i}`, patch, depth);
  for (let i = prev.length - 1; i >= next.length; i--) patch.push({ op: 'remove', path: `${path}/${i}` });
  for (let i = prev.length; i < next.length; i++)
    patch.push({ op: 'add', path: `${path}/${i}`, value: next[i] as JsonValue });
}

/**
 * Removes the records gone (from the end, so earlier indices stay), then walks `next` in order:
 * the record already at the index is patched in place, one further down is moved up first, and a
 * record not in the list is added. Each move or insert shifts the records after it, whose indices
 * are updated and counted against the list's work allowance.
 */
function diffByKey(
  prev: JsonValue[],
  next: JsonValue[],
  key: ListKey,
  path: string,
  patch: PatchOperation[],
  depth: number,
): void {
  let allowance = LIST_WORK_BASE + LIST_WORK_PER_RECORD * (prev.length + next.length);
  const nextKeys = new Set(next.map((record) => keyOf(record as JsonObject, key)));
  const working: JsonObject[] = [];
  for (let i = prev.length - 1; i >= 0; i--) {
    const record = prev[i] as JsonObject;
    if (nextKeys.has(keyOf(record, key))) working.push(record);
    else patch.push({ op: 'remove', path: `${path}/${i}` });
  }
  working.reverse();
  const keys = working.map((record) => keyOf(record, key));
  const position = new Map<string, number>(keys.map((id, j) => [id, j]));
  /** Working's records from `from` to `to` (included) moved: their positions are read again. */
  const reindex = (from: number, to: number) => {
    allowance -= to - from + 1;
    if (allowance < 0) throw new TooCostly();
    for (let j = from; j <= to; j++) position.set(keys[j] as string, j);
  };
  next.forEach((value, i) => {
    const record = value as JsonObject;
    const id = keyOf(record, key);
    const at = position.get(id);
    if (at === undefined) {
      patch.push({ op: 'add', path: `${path}/${i}`, value: record });
      working.splice(i, 0, record);
      keys.splice(i, 0, id);
      reindex(i, keys.length - 1);
      return;
    }
    // Records before `i` already stand where `next` has them, so a record found is never above `i`.
    if (at !== i) {
      patch.push({ op: 'move', from: `${path}/${at}`, path: `${path}/${i}` });
      working.splice(i, 0, ...working.splice(at, 1));
      keys.splice(i, 0, ...keys.splice(at, 1));
      reindex(i, at);
    }
    diffInto(working[i] as JsonObject, record, `${path}/${i}`, patch, depth);
  });
}

/** The fields whose values, together, name a record of a list. */
export type ListKey = readonly string[];

/**
 * The key fields upstream's lists are tried with, in this order (docs/upstream.md): the first one
 * that every record of both lists has, as a string or number, once each, is the list's key.
 */
export const listKeyCandidates: readonly ListKey[] = [
  ['id'],
  ['activity_id'],
  ['comment_id'],
  ['epoch_id'],
  ['user_id'],
  ['market_id', 'outcome'],
  ['username'],
  ['market_id'],
  ['feed_id'],
  ['time'],
  ['timestamp'],
];

export function listKeyOf(prev: readonly JsonValue[], next: readonly JsonValue[]): ListKey | undefined {
  if (prev.length + next.length === 0) return undefined;
  return listKeyCandidates.find((key) => isKeyOf(prev, key) && isKeyOf(next, key));
}

function isKeyOf(list: readonly JsonValue[], key: ListKey): boolean {
  const seen = new Set<string>();
  for (const record of list) {
    if (!isObject(record)) return false;
    for (const field of key) {
      const value = record[field];
      if (typeof value !== 'string' && typeof value !== 'number') return false;
    }
    const id = keyOf(record, key);
    if (seen.has(id)) return false;
    seen.add(id);
  }
  return true;
}

function keyOf(record: JsonObject, key: ListKey): string {
  // One field (most lists): its value, a number told from the same digits as a string.
  if (key.length === 1) {
    const value = record[key[0] as string];
    return typeof value === 'number' ? `#${value}` : `"${String(value)}`;
  }
  return JSON.stringify(key.map((field) => record[field] ?? null));
}
