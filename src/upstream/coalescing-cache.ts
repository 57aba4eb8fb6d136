/**
 * @module upstream/coalescing-cache
 * Short-lived caching with request coalescing for the REST front (docs/operations.md "REST
 * front"): concurrent requests for one key share one load, and its answer serves the same key for
 * `ttlMs` more. A failed load is not kept, so the next request tries again. Bounded: past
 * `capacity` keys the oldest is dropped.
 */
export interface CoalescingCacheOptions {
  ttlMs: number;
  capacity: number;
  now?: () => number;
}

interface Entry<V> {
  value: Promise<V>;
  /** When the settled value stops being served; Infinity while the load is in flight. */
  expiresAt: number;
}

export class CoalescingCache<V> {
  readonly #entries = new Map<string, Entry<V>>();
  readonly #ttlMs: number;
  readonly #capacity: number;
  readonly #now: () => number;

  constructor(options: CoalescingCacheOptions) {
    this.#ttlMs = options.ttlMs;
    this.#capacity = options.capacity;
    this.#now = options.now ?? Date.now;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The cached or in-flight value for `key`, or the result of one new `load`. */
  get(key: string, load: () => Promise<V>): Promise<V> {
    const cached = this.#entries.get(key);
    if (cached !== undefined && cached.expiresAt > this.#now()) return cached.value;
    const entry: Entry<V> = { value: load(), expiresAt: Number.POSITIVE_INFINITY };
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    if (this.#entries.size > this.#capacity) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
    entry.value.then(
      () => {
        entry.expiresAt = this.#now() + this.#ttlMs;
      },
      () => {
        if (this.#entries.get(key) === entry) this.#entries.delete(key);
      },
    );
    return entry.value;
  }
}
