/**
 * @module util/sorted
 * Whether a list is already in order, so that callers sort (a copy) only when they must.
 */
export function isSortedBy<T>(items: readonly T[], compare: (a: T, b: T) => number): boolean {
  for (let k = 1; k < items.length; k++) {
    if (compare(items[k - 1]!, items[k]!) > 0) return false;
  }
  return true;
}
