/**
 * @module util/backoff
 * Exponential backoff with full jitter, the one copy used by the upstream client's retries and the
 * client SDK's reconnects. Node-free (the SDK's browser bundle imports it).
 * @see https://aws.amazon.com/blogs/architecture/exponential-backoff-and-jitter/
 */

/**
 * The delay before retry number `retry`, counted from 0: the first retry after a failure is retry 0
 * and waits up to `baseMs`, retry n up to `min(capMs, baseMs * 2^n)`. Full jitter (a uniform draw
 * below that ceiling) spreads the retries of many callers that failed together instead of sending
 * them back in lock-step.
 */
export function fullJitterDelayMs(
  retry: number,
  baseMs: number,
  capMs: number,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.max(0, retry));
  return Math.floor(random() * ceiling);
}
