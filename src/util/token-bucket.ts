/**
 * @module util/token-bucket
 * A token bucket that caps how many upstream requests start per second (the relay's
 * `--upstream-rps`) and how fast one client may send frames. Pure bookkeeping over an injectable clock, so it is
 * tested without real time; the caller does the waiting.
 */

export interface TokenBucketOptions {
  /** Tokens added per second, continuously. */
  ratePerSecond: number;
  /** Largest burst; default one second's worth (`ratePerSecond`), at least 1. */
  capacity?: number;
  /** Milliseconds from any fixed origin; default `performance.now`. */
  now?: () => number;
}

/**
 * Reservation-based: `reserve()` always takes a token, letting the balance go negative, and says how
 * long the caller must wait before its token exists. Each reservation waits longer than the one
 * before it, so waiting callers are served in arrival order (FIFO) without a queue here.
 */
export class TokenBucket {
  readonly ratePerSecond: number;
  readonly capacity: number;
  readonly #now: () => number;
  #tokens: number;
  #updatedAt: number;

  constructor(options: TokenBucketOptions) {
    if (!(options.ratePerSecond > 0)) throw new RangeError('ratePerSecond must be > 0');
    this.ratePerSecond = options.ratePerSecond;
    this.capacity = Math.max(1, options.capacity ?? options.ratePerSecond);
    this.#now = options.now ?? (() => performance.now());
    this.#tokens = this.capacity;
    this.#updatedAt = this.#now();
  }

  /** Takes one token; returns the milliseconds to wait before using it (0 = now). */
  reserve(): number {
    this.#refill();
    this.#tokens -= 1;
    if (this.#tokens >= 0) return 0;
    return Math.ceil((-this.#tokens * 1000) / this.ratePerSecond);
  }

  /** Gives back a reserved token that was never used (its caller gave up while waiting). */
  refund(): void {
    this.#refill();
    this.#tokens = Math.min(this.capacity, this.#tokens + 1);
  }

  /** Current balance; negative while reservations are waiting. */
  get tokens(): number {
    this.#refill();
    return this.#tokens;
  }

  /** Milliseconds until a whole token is there to take (0: one is). */
  msUntilToken(): number {
    this.#refill();
    return this.#tokens >= 1 ? 0 : ((1 - this.#tokens) * 1000) / this.ratePerSecond;
  }

  #refill(): void {
    const now = this.#now();
    const elapsed = Math.max(0, now - this.#updatedAt);
    this.#updatedAt = now;
    this.#tokens = Math.min(this.capacity, this.#tokens + (elapsed * this.ratePerSecond) / 1000);
  }
}
