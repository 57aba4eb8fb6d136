/**
 * @module upstream/retry-policy
 * The server's own `Retry-After` on a 429 (RFC 9110 section 10.2.3: delay-seconds or an HTTP date);
 * without one the client falls back to the full-jitter backoff of util/backoff.ts.
 */

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
