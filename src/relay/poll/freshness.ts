/**
 * @module relay/poll/freshness
 * When a poll target's streams stop being `live`. A target is stale when its last confirmation is
 * older than `staleAfterFactor` times the interval it is actually polled at (so a busy book that
 * stops answering goes stale within a few of its own intervals), and never later than its maximum
 * age plus that grace: a stream not confirmed within its promised maximum age is not live, whatever
 * the reason (upstream down, budget short, the relay's CPU behind). Staleness is about answers, not
 * waiting (docs/operations.md "Freshness"): past that age, a target whose last answer was a success
 * and whose next request is still under way within the upstream timeout is not stale yet, because
 * that request may still answer.
 */
import type { TargetTiming } from './scheduler.ts';

export interface Confirmation {
  addedAt: number;
  confirmedAt: number | undefined;
  /** Why the last request failed; undefined after a success. */
  lastError: string | undefined;
  /** Measured mean time between requests (ms); undefined before the second. */
  meanAskGapMs: number | undefined;
  /** When the upstream request that may confirm it next was sent; undefined while none is under way. */
  awaitingSince: number | undefined;
}

/** How freshness is judged: the relay's `--stale-after-polls` and `--upstream-timeout-ms`. */
export interface FreshnessRule {
  staleAfterFactor: number;
  /** How long one upstream request may take before it counts as failed. */
  requestTimeoutMs: number;
}

/**
 * Age (ms) after which a target counts as stale. `budgetIntervalMs` is the interval the budget
 * allows every target alike (the configured one, stretched when the budget is short); a target
 * polled less often than that (a quiet book) is judged by its own measured interval.
 */
export function staleAfterMs(
  timing: TargetTiming,
  budgetIntervalMs: number,
  meanAskGapMs: number | undefined,
  factor: number,
): number {
  const interval = Math.max(timing.minIntervalMs, budgetIntervalMs, meanAskGapMs ?? 0);
  return Math.min(factor * interval, timing.maxAgeMs + factor * timing.minIntervalMs);
}

/** Why the target is stale now, or undefined while it is fresh enough. */
export function staleReason(
  confirmation: Confirmation,
  timing: TargetTiming,
  budgetIntervalMs: number,
  rule: FreshnessRule,
  now: number,
): string | undefined {
  const age = now - (confirmation.confirmedAt ?? confirmation.addedAt);
  if (age <= staleAfterMs(timing, budgetIntervalMs, confirmation.meanAskGapMs, rule.staleAfterFactor))
    return undefined;
  if (confirmation.lastError !== undefined) return confirmation.lastError;
  const { awaitingSince } = confirmation;
  // A slow answer is not a missing one: only its timeout says upstream failed to answer.
  if (awaitingSince !== undefined && now - awaitingSince <= rule.requestTimeoutMs) return undefined;
  return age > timing.maxAgeMs ? 'not confirmed within the maximum age' : 'no upstream response';
}

/** The mean gap between requests after one more, weighting recent gaps most. */
export function meanGapAfter(mean: number | undefined, gapMs: number): number {
  return mean === undefined ? gapMs : 0.8 * mean + 0.2 * gapMs;
}

/** What the relay promises about freshness and what it achieves (for /health, metrics, status). */
export interface FreshnessReport {
  maxAgeMs: number;
  /** Oldest confirmation of any polled target now (ms); 0 when nothing is polled. */
  oldestAgeMs: number;
  /** False when a target is older than the maximum age, or the budget cannot confirm all in time. */
  maxAgeKept: boolean;
  /** Polls per second the configured intervals ask for, the budget, and what was started. */
  pollsPerSecond: { requested: number; budget: number; achieved: number };
  /** Mean time between requests per target, measured (dispatch and CPU lag included); null before any. */
  effectiveIntervalMs: { book: number | null; price: number | null };
}

/** The mean of the values measured so far; null before any. */
export function meanOf(values: (number | undefined)[]): number | null {
  const known = values.filter((value) => value !== undefined);
  return known.length === 0 ? null : known.reduce((sum, value) => sum + value, 0) / known.length;
}
