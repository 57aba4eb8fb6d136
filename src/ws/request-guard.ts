/**
 * @module ws/request-guard
 * A connection's request rate limit, decided before any work is done on a frame (protocol.md
 * "Limits"). Within the rate (a token bucket) a frame is handled. Over it, the frame is dropped
 * unread: the first such frame of each one-second window is answered with one `rate_limited` error,
 * the others are not answered at all, and a connection that stays over its rate for
 * `floodCloseAfterMs` is closed (close code 4429). Pure bookkeeping over an injectable clock; the
 * connection pauses reading for a window, so a flood waits in the client's TCP buffers.
 */
import { TokenBucket } from '../upstream/rate-gate.ts';

/** handle: parse and serve; refuse: answer one rate_limited; drop: ignore silently; close: flooding. */
export type FrameVerdict = 'handle' | 'refuse' | 'drop' | 'close';

export interface RequestGuardOptions {
  requestsPerSecond: number;
  requestBurst: number;
  /** How long a connection may stay over its rate (every window with a dropped frame) before it is closed. */
  floodCloseAfterMs: number;
  /** Milliseconds from any fixed origin; default `performance.now`. */
  now?: () => number;
}

/** One `rate_limited` error at most per window. */
export const RATE_WINDOW_MS = 1_000;
/**
 * A flood ends after this long without a dropped frame: two windows, since the connection reads
 * nothing for a window after each drop, so a flood's next frames come a window later.
 */
const FLOOD_QUIET_MS = 2 * RATE_WINDOW_MS;

export class RequestGuard {
  readonly #bucket: TokenBucket;
  readonly #floodCloseAfterMs: number;
  readonly #now: () => number;
  /** When the current run of over-rate windows began, and the last dropped frame. */
  #overSince: number | undefined;
  #lastOverAt = Number.NEGATIVE_INFINITY;
  #refusedAt = Number.NEGATIVE_INFINITY;
  #dropped = 0;

  constructor(options: RequestGuardOptions) {
    this.#now = options.now ?? (() => performance.now());
    this.#bucket = new TokenBucket({
      ratePerSecond: options.requestsPerSecond,
      capacity: options.requestBurst,
      now: this.#now,
    });
    this.#floodCloseAfterMs = options.floodCloseAfterMs;
  }

  /** Frames dropped unread so far. */
  get dropped(): number {
    return this.#dropped;
  }

  /** Requests that would be handled now, and the bucket's size and rate (what `list` reports). */
  get allowance(): { available: number; burst: number; per_second: number } {
    return {
      available: Math.floor(this.#bucket.tokens),
      burst: this.#bucket.capacity,
      per_second: this.#bucket.ratePerSecond,
    };
  }

  /** Milliseconds until the next frame would be handled (0 = now). */
  get waitMs(): number {
    const missing = 1 - this.#bucket.tokens;
    return missing <= 0 ? 0 : Math.ceil((missing * 1000) / this.#bucket.ratePerSecond);
  }

  admit(): FrameVerdict {
    const now = this.#now();
    if (now - this.#lastOverAt > FLOOD_QUIET_MS) this.#overSince = undefined;
    if (this.#bucket.tokens >= 1) {
      this.#bucket.reserve();
      return 'handle';
    }
    this.#dropped += 1;
    this.#overSince ??= now;
    this.#lastOverAt = now;
    if (now - this.#overSince >= this.#floodCloseAfterMs) return 'close';
    if (now - this.#refusedAt < RATE_WINDOW_MS) return 'drop';
    this.#refusedAt = now;
    return 'refuse';
  }
}
