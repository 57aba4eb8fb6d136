/**
 * @module upstream/rate-gate
 * Where an upstream attempt waits for its rate token. Pluggable so that `--upstream-rps` can be
 * one relay's budget (LocalRateGate, the default) or the whole cluster's (the Redis gate in
 * src/relay/coordination/redis/), while the transport's concurrency cap and retry loop stay the same.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { TokenBucket } from '../util/token-bucket.ts';

export interface RateGate {
  /**
   * Resolves when one more upstream request may start. Rejects with the signal's reason as soon as
   * it aborts, giving back what it had taken.
   */
  acquire(signal: AbortSignal): Promise<void>;
}

/**
 * A second as upstream counts it may start a little off the relay's: requests are spaced over a
 * window this much longer, so that network jitter never puts more than `rps` into one of upstream's.
 */
const WINDOW_MARGIN_MS = 50;

/**
 * `rps` requests per second for this process alone, a ceiling in every window (docs/scheduler.md
 * "The budget"): at most `rps` start within any second (by the relay's clock, with a small margin
 * for upstream's), and at most a fifth of a second's worth at once. A token bucket alone (one
 * second's worth of burst) let twice `rps` into one second after a quiet one.
 */
export class LocalRateGate implements RateGate {
  readonly #bucket: TokenBucket;
  readonly #window: StartWindow;

  constructor(rps: number) {
    this.#bucket = new TokenBucket({ ratePerSecond: rps, capacity: Math.max(1, Math.floor(rps / 5)) });
    this.#window = new StartWindow(Math.max(1, Math.floor(rps)), 1_000 + WINDOW_MARGIN_MS);
  }

  get ratePerSecond(): number {
    return this.#bucket.ratePerSecond;
  }

  async acquire(signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    const now = performance.now();
    // The window counts the start when it really happens: after the bucket's wait, if any.
    const total = Math.ceil(this.#window.reserve(now + this.#bucket.reserve(), now));
    if (total <= 0) return;
    try {
      await delay(total, undefined, { signal });
    } catch (error) {
      // The bucket's token comes back; the window's start stays taken (at worst one start fewer
      // in that window, never one more).
      this.#bucket.refund();
      throw error;
    }
  }
}

/**
 * At most `limit` starts in any `windowMs`: the start times given out (some in the future, for
 * callers still waiting), in order, in a ring of `limit`.
 */
export class StartWindow {
  readonly #limit: number;
  readonly #windowMs: number;
  readonly #starts: number[] = [];
  /** Index of the oldest start once the ring is full. */
  #oldest = 0;

  constructor(limit: number, windowMs: number) {
    this.#limit = limit;
    this.#windowMs = windowMs;
  }

  /**
   * Reserves the earliest start at or after `earliest` (relay clock, ms) that keeps the limit;
   * returns the wait from `now` until it (ms).
   */
  reserve(earliest: number, now = earliest): number {
    const count = this.#starts.length;
    const newest = count === 0 ? earliest : this.#starts[(this.#oldest + count - 1) % count]!;
    let at = Math.max(earliest, newest);
    if (count < this.#limit) this.#starts.push(at);
    else {
      at = Math.max(at, this.#starts[this.#oldest]! + this.#windowMs);
      this.#starts[this.#oldest] = at;
      this.#oldest = (this.#oldest + 1) % this.#limit;
    }
    return at - now;
  }
}
