/**
 * @module upstream/rate-gate
 * The caps on upstream load: at most `concurrency` requests in flight (Admission) and at most `rps`
 * started per second, waited for at a rate gate. The gate is pluggable so that `--upstream-rps` can
 * be one relay's budget (LocalRateGate, the default) or the whole cluster's (the Redis gate in
 * src/relay/coordination/redis/), while the transport's concurrency cap and retry loop stay the
 * same. The token bucket under the local gate also paces the poll dispatcher, the edge's admission
 * and one client's frames.
 *
 * How the relay backs off when upstream answers 429 is here too, beside the caps it lowers. The retry of that request waits for the
 * server's own `Retry-After` (RFC 9110 section 10.2.3: delay-seconds or an HTTP date); without one
 * the transport falls back to the full-jitter backoff of packages/protocol/src/util/backoff.ts.
 * The relay's whole request rate falls too, and comes back (docs/scheduler.md "Rate limits"):
 * multiplicative decrease, additive increase, as TCP treats congestion. A 429 halves the rate
 * actually in use (never below a tenth of the configured rate) and holds it until the answer's
 * `Retry-After` has passed (at least a second: the 429s of one overloaded second are one signal,
 * not many); then the limit grows by a tenth of the configured rate per second until it is the
 * configured rate again.
 */
import { setTimeout as delay } from 'node:timers/promises';

export interface AdmissionLoad {
  inFlight: number;
  queued: number;
}

/**
 * Concurrency first, then the rate gate, with the counts the status page and metrics show. A call
 * that finds a free slot starts without queueing or any listener; only calls that wait listen for
 * their signal.
 */
export class Admission {
  readonly #concurrency: number;
  readonly #rate: RateGate;
  /** Calls waiting for a slot, first come first served. */
  readonly #waiters: (() => void)[] = [];
  /** Slots taken: by calls waiting for their rate token and by running work. */
  #slots = 0;
  #inFlight = 0;
  #queued = 0;

  constructor(options: { concurrency: number; rate: RateGate }) {
    this.#concurrency = options.concurrency;
    this.#rate = options.rate;
  }

  load(): AdmissionLoad {
    return { inFlight: this.#inFlight, queued: this.#queued };
  }

  /**
   * Waits for a concurrency slot, then a rate token, then runs `work`; counted as queued until then.
   * Rejects with the signal's reason as soon as it aborts while waiting; `work` itself must end when
   * the signal aborts (the exchange does).
   */
  async run<T>(work: () => Promise<T>, signal: AbortSignal): Promise<T> {
    signal.throwIfAborted();
    this.#queued++;
    let queued = true;
    try {
      const slot = this.#takeSlot(signal);
      if (slot !== undefined) await slot;
      try {
        await this.#rate.acquire(signal);
        queued = false;
        this.#queued--;
        this.#inFlight++;
        try {
          return await work();
        } finally {
          this.#inFlight--;
        }
      } finally {
        this.#releaseSlot();
      }
    } finally {
      if (queued) this.#queued--;
    }
  }

  #takeSlot(signal: AbortSignal): Promise<void> | undefined {
    if (this.#slots < this.#concurrency && this.#waiters.length === 0) {
      this.#slots++;
      return undefined;
    }
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        const index = this.#waiters.indexOf(handOver);
        if (index !== -1) this.#waiters.splice(index, 1);
        reject(signal.reason);
      };
      const handOver = (): void => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      this.#waiters.push(handOver);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** The slot goes to the first waiter, or back to the pool. */
  #releaseSlot(): void {
    const handOver = this.#waiters.shift();
    if (handOver === undefined) this.#slots--;
    else handOver();
  }
}

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

export interface TokenBucketOptions {
  /** Tokens added per second, continuously. */
  ratePerSecond: number;
  /** Largest burst; default one second's worth (`ratePerSecond`), at least 1. */
  capacity?: number;
  /** Milliseconds from any fixed origin; default `performance.now`. */
  now?: () => number;
}

/**
 * A token bucket: pure bookkeeping over an injectable clock, so it is tested without real time; the
 * caller does the waiting. Reservation-based: `reserve()` always takes a token, letting the balance
 * go negative, and says how long the caller must wait before its token exists. Each reservation
 * waits longer than the one before it, so waiting callers are served in arrival order (FIFO)
 * without a queue here.
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

export interface RateBackoff {
  /** Requests per second the relay keeps to; undefined while it is not limited. */
  limitRps: number | undefined;
  /** No increase (and no further decrease) before this time (ms). */
  holdUntil: number;
}

export const NOT_LIMITED: RateBackoff = { limitRps: undefined, holdUntil: Number.NEGATIVE_INFINITY };

/** A 429 cuts the rate in use by this factor. */
export const RATE_DECREASE = 0.5;
/** Per second after the hold, the limit grows by this share of the configured rate. */
export const RATE_RECOVERY_SHARE = 0.1;
/**
 * The limit never falls below this share of the configured rate: the relay must go on learning
 * whether upstream is back, and each target's own Retry-After still holds it back below that.
 */
export const RATE_FLOOR_SHARE = 0.1;
/** The shortest hold, whatever `Retry-After` says (or when it says nothing). */
export const MIN_HOLD_MS = 1_000;

/** The limit at `now` (ms), undefined once it has grown back to `configuredRps`. */
export function limitAt(backoff: RateBackoff, now: number, configuredRps: number): number | undefined {
  if (backoff.limitRps === undefined) return undefined;
  if (now < backoff.holdUntil) return backoff.limitRps;
  const grown = backoff.limitRps + (RATE_RECOVERY_SHARE * configuredRps * (now - backoff.holdUntil)) / 1000;
  return grown >= configuredRps ? undefined : grown;
}

/**
 * After a 429 answered at `now`: `usedRps` is the rate the relay was actually sending at, and
 * `retryAfterMs` what upstream asked for (undefined when it did not say).
 */
export function afterRateLimited(
  backoff: RateBackoff,
  answer: { now: number; retryAfterMs: number | undefined; usedRps: number; configuredRps: number },
): RateBackoff {
  const { now, configuredRps } = answer;
  const holdUntil = now + Math.max(MIN_HOLD_MS, answer.retryAfterMs ?? 0);
  // Within a hold the cut was already made: a later 429 only makes the hold last longer.
  if (now < backoff.holdUntil)
    return { limitRps: backoff.limitRps, holdUntil: Math.max(backoff.holdUntil, holdUntil) };
  const floor = configuredRps * RATE_FLOOR_SHARE;
  const current = Math.min(limitAt(backoff, now, configuredRps) ?? configuredRps, answer.usedRps);
  return { limitRps: Math.max(floor, current * RATE_DECREASE), holdUntil };
}

/**
 * Milliseconds a `Retry-After` value asks for, capped at `capMs`; undefined when the header is
 * absent or unreadable (the caller then falls back to backoff).
 */
export function retryAfterMs(header: string | undefined, nowMs: number, capMs: number): number | undefined {
  if (header === undefined) return undefined;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Math.min(capMs, Number(value) * 1000);
  // Every HTTP date format names a weekday and month; this keeps Date.parse from reading "-1" as a year.
  const date = /[a-z]/i.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(date)) return undefined;
  return Math.min(capMs, Math.max(0, date - nowMs));
}
