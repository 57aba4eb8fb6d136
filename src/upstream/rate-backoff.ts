/**
 * @module upstream/rate-backoff
 * How the relay backs off when upstream answers 429. The retry of that request waits for the
 * server's own `Retry-After` (RFC 9110 section 10.2.3: delay-seconds or an HTTP date); without one
 * the transport falls back to the full-jitter backoff of packages/protocol/src/util/backoff.ts.
 * The relay's whole request rate falls too, and comes back (docs/scheduler.md "Rate limits"):
 * multiplicative decrease, additive increase, as TCP treats congestion. A 429 halves the rate
 * actually in use (never below a tenth of the configured rate) and holds it until the answer's
 * `Retry-After` has passed (at least a second: the 429s of one overloaded second are one signal,
 * not many); then the limit grows by a tenth of the configured rate per second until it is the
 * configured rate again.
 */

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
