/**
 * @module channels/trades/recent-ids
 * A bounded set of ids remembering the most recently added ones: how the relay and the SDK keep
 * "this `activity_id` was already delivered" (docs/protocol.md "`trades` data") without growing
 * with a stream's lifetime. Adding beyond the capacity forgets the oldest id added; the capacity
 * may be widened, never narrowed, so that a memory is only as large as its stream has needed.
 */
export class RecentIds {
  #capacity: number;
  /** A Set iterates in insertion order: its first element is the oldest id. */
  readonly #ids = new Set<string>();

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new RangeError('capacity must be a positive integer');
    this.#capacity = capacity;
  }

  get capacity(): number {
    return this.#capacity;
  }

  /** Remembers up to `capacity` ids from now on, if that is more than today. */
  widen(capacity: number): void {
    if (!Number.isInteger(capacity)) throw new RangeError('capacity must be an integer');
    if (capacity > this.#capacity) this.#capacity = capacity;
  }

  get size(): number {
    return this.#ids.size;
  }

  has(id: string): boolean {
    return this.#ids.has(id);
  }

  /** Remembers `id`; false when it was already remembered (its age is then unchanged). */
  add(id: string): boolean {
    if (this.#ids.has(id)) return false;
    this.#ids.add(id);
    if (this.#ids.size > this.#capacity) {
      const oldest = this.#ids.values().next();
      if (!oldest.done) this.#ids.delete(oldest.value);
    }
    return true;
  }
}
