/**
 * @module relay/poll/freshness
 * When a poll target's streams stop being `live`, judged in this one place. A target is stale when
 * its last confirmation is older than `staleAfterFactor` times the interval it is actually polled at
 * (so a busy book that stops answering goes stale within a few of its own intervals), and never
 * later than its maximum age plus that grace: a stream not confirmed within its promised maximum age
 * is not live, whatever the reason (upstream down, budget short, the relay's CPU behind). Staleness
 * is about answers, not waiting (docs/operations.md "Freshness"): past that age, a target whose last
 * answer was a success and whose next request is still under way within the upstream timeout is not
 * stale yet, because that request may still answer.
 *
 * The judge (`FreshnessJudge`) applies that rule: one walk over every target per sweep marks stale
 * the streams of each target not confirmed in time, and keeps what the freshness report needs (the
 * oldest confirmation, the books' measured intervals), so `/metrics` and `/health` read that instead
 * of walking the targets again for each figure. The report's ages run on from the walk to the time
 * asked; a walk made before the target set changed is made again when read.
 */

import type { StreamPublisher } from '../streams/publisher.ts';
import type { AnyStream } from '../streams/stream.ts';
import {
  type PlanKind,
  type PlannedTargets,
  type PollPlan,
  REPORTED_KINDS,
  type ReportedKind,
} from './plan.ts';
import type { Confirmation } from './poll-target.ts';
import type { TargetTiming } from './scheduler.ts';
import type { TargetCollection } from './target-collection.ts';

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
  effectiveIntervalMs: Record<ReportedKind, number | null>;
}

/** The mean of the values measured so far; null before any. */
export function meanOf(values: (number | undefined)[]): number | null {
  const known = values.filter((value) => value !== undefined);
  return known.length === 0 ? null : known.reduce((sum, value) => sum + value, 0) / known.length;
}

export interface JudgeOptions {
  publisher: StreamPublisher;
  rule: FreshnessRule;
  maxAgeMs: number;
  /** Polls started per second, as the dispatcher measured them. */
  achievedPerSecond: () => number;
}

/** The targets the judge walks: the collections that hold any (an empty one is never walked). */
export type JudgedTargets = () => readonly TargetCollection[];

/** What the plan is made for, counted from `collections`. */
export function plannedTargets(collections: readonly TargetCollection[]): PlannedTargets {
  const planned = { books: 0, polledBooks: 0, priceMarkets: 0, priceBatches: 0, streamTargets: 0 };
  for (const collection of collections) collection.count(planned);
  return planned;
}

/** What one walk over the targets found. */
interface Walk {
  /** The oldest confirmation (or, never confirmed, addition) of any target; undefined: none. */
  oldestAt: number | undefined;
  /** Each kind's requests' measured mean time between asks. */
  gaps: Map<PlanKind, (number | undefined)[]>;
}

export class FreshnessJudge {
  readonly #options: JudgeOptions;
  readonly #targets: JudgedTargets;
  readonly #plan: PollPlan;
  #walk: Walk | undefined;

  constructor(options: JudgeOptions, targets: JudgedTargets, plan: PollPlan) {
    this.#options = options;
    this.#targets = targets;
    this.#plan = plan;
  }

  /** Marks stale every stream whose target has not been confirmed in time. */
  sweep(now: number): void {
    const overdue: [AnyStream, string][] = [];
    this.#walk = this.#walkTargets(now, (streams, reason) => {
      for (const stream of streams) overdue.push([stream, reason]);
    });
    // One round for the whole sweep, spread over turns (the publisher's markStale).
    if (overdue.length > 0) void this.#options.publisher.markStale(overdue);
  }

  /** Targets came or went: the next report walks them again, unless a sweep does first. */
  targetsChanged(): void {
    this.#walk = undefined;
  }

  report(now: number): FreshnessReport {
    this.#walk ??= this.#walkTargets(now, undefined);
    const walk = this.#walk;
    const planned = plannedTargets(this.#targets());
    const { maxAgeMs } = this.#options;
    const oldestAgeMs = walk.oldestAt === undefined ? 0 : Math.max(0, now - walk.oldestAt);
    const budget = this.#plan.pollingRps;
    return {
      maxAgeMs,
      oldestAgeMs,
      maxAgeKept: oldestAgeMs <= maxAgeMs && this.#plan.leastForMaxAge(planned) <= budget,
      pollsPerSecond: {
        requested: this.#plan.requestedPerSecond(planned),
        budget,
        achieved: this.#options.achievedPerSecond(),
      },
      effectiveIntervalMs: Object.fromEntries(
        REPORTED_KINDS.map((kind) => [kind, meanOf(walk.gaps.get(kind) ?? [])]),
      ) as Record<ReportedKind, number | null>,
    };
  }

  /** One walk over every target; with `stale`, each target's streams that are stale, and why. */
  #walkTargets(
    now: number,
    stale: ((streams: Iterable<AnyStream>, reason: string) => void) | undefined,
  ): Walk {
    const { rule } = this.#options;
    let oldestAt: number | undefined;
    const gaps = new Map<PlanKind, (number | undefined)[]>();
    for (const collection of this.#targets()) {
      const budgetIntervalMs = this.#plan.intervalOf(collection.kind);
      collection.judged.visit((target, timing, streamsOf) => {
        const at = target.confirmedAt ?? target.addedAt;
        if (oldestAt === undefined || at < oldestAt) oldestAt = at;
        if (stale === undefined) return;
        const reason = staleReason(target, timing, budgetIntervalMs, rule, now);
        if (reason !== undefined) stale(streamsOf(), reason);
      });
      const kindGaps = gaps.get(collection.kind) ?? [];
      kindGaps.push(...collection.judged.askGaps());
      gaps.set(collection.kind, kindGaps);
    }
    return { oldestAt, gaps };
  }
}
