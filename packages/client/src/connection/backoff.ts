/**
 * @module client/connection/backoff
 * Reconnect delays: exponential backoff with full jitter (a uniformly random delay between 0 and the
 * capped exponential), so 10,000 clients dropped by one relay restart do not return in lockstep.
 * After a 1001 ("relay shutting down", protocol.md "Close codes") every client first waits a random
 * part of `goingAwaySpreadMs`, spreading the herd over that window before backoff starts.
 */
import { closeCodes } from '../../../protocol/src/protocol/messages.ts';
import { fullJitterDelayMs } from '../../../protocol/src/util/backoff.ts';

export interface BackoffOptions {
  /** Upper bound of the first retry's delay (ms). Default 500. */
  baseMs: number;
  /** Upper bound of any delay (ms). Default 30 000. */
  maxMs: number;
  /** Window over which reconnects after a 1001 close are spread (ms). Default 5 000. */
  goingAwaySpreadMs: number;
}

export const defaultBackoff: BackoffOptions = { baseMs: 500, maxMs: 30_000, goingAwaySpreadMs: 5_000 };

/** A source of uniform numbers in [0, 1), injectable for tests. */
export type RandomSource = () => number;

/** Delay before retry number `attempt` (0 for the first retry after a drop): full jitter. */
export function backoffDelay(
  attempt: number,
  options: BackoffOptions,
  random: RandomSource = Math.random,
): number {
  return fullJitterDelayMs(attempt, options.baseMs, options.maxMs, random);
}

/**
 * Delay before reconnect `attempt` after a close with `code`: for the first retry after a 1001 the
 * random spread replaces the backoff, so the shutdown of a relay holding many clients is not followed
 * by all of them at once.
 */
export function reconnectDelay(
  attempt: number,
  closeCode: number | undefined,
  options: BackoffOptions,
  random: RandomSource = Math.random,
): number {
  if (attempt === 0 && closeCode === closeCodes.goingAway)
    return Math.floor(random() * options.goingAwaySpreadMs);
  return backoffDelay(attempt, options, random);
}
