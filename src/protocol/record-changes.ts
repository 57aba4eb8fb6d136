/**
 * @module protocol/record-changes
 * Applying a keyed change set to a record, as the `market` channel (changed fields) and the
 * `probabilities` channel (changed entries) send them: a value replaces, `null` removes the key
 * (docs/protocol.md "`market`", "`probabilities`"). Pure and Node-free, shared by the client SDK
 * and the relay's tests.
 */

/**
 * The record after `changes`; a new object, `state` is not touched. Built with `Object.fromEntries`
 * so that a key such as `__proto__` from the wire stays an ordinary key.
 */
export function applyRecordChanges<Value>(
  state: Readonly<Record<string, Value>>,
  changes: Readonly<Record<string, Value | null>>,
): Record<string, Value> {
  const next = new Map<string, Value>(Object.entries(state));
  for (const [key, value] of Object.entries(changes)) {
    if (value === null) next.delete(key);
    else next.set(key, value);
  }
  return Object.fromEntries(next);
}
