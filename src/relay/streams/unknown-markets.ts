/**
 * @module relay/streams/unknown-markets
 * Markets upstream recently answered "not found" for. A subscription to one of them is answered
 * `unknown_market` at once instead of costing another upstream request, so a client that keeps
 * asking for a wrong id (a typo in a bot's reconnect loop) cannot spend the upstream budget that
 * real markets need. Bounded in time (entries expire: a market may be listed later) and in size.
 */

export class UnknownMarkets {
  /** market -> relay clock (ms) until which it counts as unknown; insertion order = age. */
  readonly #until = new Map<string, number>();
  readonly #ttlMs: number;
  readonly #capacity: number;
  readonly #now: () => number;

  constructor(options: { ttlMs: number; capacity: number; now?: () => number }) {
    this.#ttlMs = options.ttlMs;
    this.#capacity = options.capacity;
    this.#now = options.now ?? Date.now;
  }

  add(market: string): void {
    this.#until.delete(market);
    this.#until.set(market, this.#now() + this.#ttlMs);
    if (this.#until.size > this.#capacity) {
      const oldest = this.#until.keys().next().value;
      if (oldest !== undefined) this.#until.delete(oldest);
    }
  }

  has(market: string): boolean {
    const until = this.#until.get(market);
    if (until === undefined) return false;
    if (until > this.#now()) return true;
    this.#until.delete(market);
    return false;
  }

  get size(): number {
    return this.#until.size;
  }
}
