/**
 * @module channels/records
 * The channels whose state is a map of records keyed by id (a market's fields, every market's
 * entry, the catalogue): an update carries the records new or changed, whole, and `null` for each
 * one gone. Both directions, pure: the relay diffs with {@link diffRecord}, clients apply with
 * {@link applyRecordUpdate}; applying `diffRecord(prev, next)` to `prev` gives `next`.
 */

/** A JSON value as upstream sent it. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/**
 * Built through a Map and `Object.fromEntries` so that a key such as `__proto__` from the wire stays
 * an ordinary key (assigning it on an object would set the prototype instead).
 */
export function applyRecordUpdate<V>(
  state: Record<string, V>,
  update: Record<string, V | null>,
): Record<string, V> {
  const next = new Map<string, V>(Object.entries(state));
  for (const [key, value] of Object.entries(update)) {
    if (value === null) next.delete(key);
    else next.set(key, value);
  }
  return Object.fromEntries(next);
}

/** Built through entries, so that a key such as `__proto__` (upstream's JSON) stays a key. */
export function diffRecord<V>(
  prev: Readonly<Record<string, V>>,
  next: Readonly<Record<string, V>>,
  same: (a: V, b: V) => boolean,
): Record<string, V | null> | null {
  const changes: [string, V | null][] = [];
  for (const [key, value] of Object.entries(next)) {
    const old = Object.hasOwn(prev, key) ? prev[key] : undefined;
    if (old === undefined || !same(old, value)) changes.push([key, value]);
  }
  for (const key of Object.keys(prev)) if (!Object.hasOwn(next, key)) changes.push([key, null]);
  return changes.length === 0 ? null : Object.fromEntries(changes);
}

export function sameJson(a: JsonValue, b: JsonValue): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((value, i) => sameJson(value, b[i]!));
  }
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  // Own keys only: `'__proto__' in b` holds for every object, and b.__proto__ is then its prototype.
  return keys.every((key) => Object.hasOwn(b, key) && sameJson(a[key]!, b[key]!));
}

/** A record's own fields. */
export function fieldCount(record: object): number {
  let count = 0;
  for (const key in record) if (Object.hasOwn(record, key)) count += 1;
  return count;
}
