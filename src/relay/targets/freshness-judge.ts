/**
 * @module relay/targets/freshness-judge
 * Freshness judged in one place (relay/poll/freshness.ts): one walk over every target per sweep
 * marks stale the streams of each target not confirmed in time, and keeps what the freshness
 * report needs (the oldest confirmation, the books' measured intervals), so `/metrics` and `/health`
 * read that instead of walking the targets again for each figure. The report's ages run on from the
 * walk to the time asked; a walk made before the target set changed is made again when read.
 */
import {
  type Confirmation,
  type FreshnessReport,
  type FreshnessRule,
  meanOf,
  staleReason,
} from '../poll/freshness.ts';
import type { PlannedTargets, PollPlan } from '../poll/plan.ts';
import type { TargetTiming } from '../poll/scheduler.ts';
import type { StreamPublisher } from '../streams/publisher.ts';
import type { StreamRegistry } from '../streams/registry.ts';
import type { AnyStream } from '../streams/stream.ts';
import type { BookTargets } from './book-targets.ts';
import { bookTargetStreams } from './holders.ts';
import type { PriceTargets } from './price-targets.ts';
import type { StreamTargets } from './stream-targets.ts';

export interface JudgeOptions {
  registry: StreamRegistry;
  publisher: StreamPublisher;
  rule: FreshnessRule;
  maxAgeMs: number;
  /** Polls started per second, as the dispatcher measured them. */
  achievedPerSecond: () => number;
}

/** Every target the judge walks. */
export interface JudgedTargets {
  books: BookTargets;
  prices: PriceTargets;
  streams: StreamTargets;
}

/** What one walk over the targets found. */
interface Walk {
  /** The oldest confirmation (or, never confirmed, addition) of any target; undefined: none. */
  oldestAt: number | undefined;
  /** The books' measured mean time between requests. */
  bookGaps: (number | undefined)[];
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
    this.#walk = this.#walkTargets(now, (streams, reason) => {
      for (const stream of streams) this.#options.publisher.markStale(stream, reason);
    });
  }

  /** Targets came or went: the next report walks them again, unless a sweep does first. */
  targetsChanged(): void {
    this.#walk = undefined;
  }

  report(now: number): FreshnessReport {
    this.#walk ??= this.#walkTargets(now, undefined);
    const walk = this.#walk;
    const { books, prices, streams } = this.#targets;
    const planned: PlannedTargets = {
      books: books.size,
      priceMarkets: prices.marketCount,
      priceBatches: prices.batchCount,
      streamTargets: streams.size,
    };
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
      effectiveIntervalMs: { book: meanOf(walk.bookGaps), price: meanOf(prices.meanAskGaps()) },
    };
  }

  /** One walk over every target; with `stale`, each target's streams that are stale, and why. */
  #walkTargets(
    now: number,
    stale: ((streams: Iterable<AnyStream>, reason: string) => void) | undefined,
  ): Walk {
    const { registry, rule, maxAgeMs } = this.#options;
    const { books, prices, streams } = this.#targets;
    let oldestAt: number | undefined;
    const judge = (
      target: Confirmation,
      timing: TargetTiming,
      budgetIntervalMs: number,
      streamsOf: () => Iterable<AnyStream>,
    ) => {
      const at = target.confirmedAt ?? target.addedAt;
      if (oldestAt === undefined || at < oldestAt) oldestAt = at;
      if (stale === undefined) return;
      const reason = staleReason(target, timing, budgetIntervalMs, rule, now);
      if (reason !== undefined) stale(streamsOf(), reason);
    };
    const bookGaps: (number | undefined)[] = [];
    const { bookIntervalMs } = this.#plan.intervals;
    for (const book of books.values()) {
      bookGaps.push(book.meanAskGapMs);
      judge(book, book.timing, bookIntervalMs, () => bookTargetStreams(registry, book.market));
    }
    // Judged against the interval prices are asked at, and the maximum age every stream promises.
    const priceTiming = { ...this.#plan.priceTiming(), maxAgeMs };
    const { priceIntervalMs } = this.#plan.intervals;
    for (const [market, health] of prices.markets())
      judge(health, priceTiming, priceIntervalMs, () => registry.streamsOf('price', market));
    const streamIntervalMs = this.#plan.streamIntervalMs;
    for (const target of streams.values()) {
      judge(target, target.timing, streamIntervalMs, () =>
        registry.streamsOf(target.channel, target.streamId),
      );
    }
    return { oldestAt, bookGaps };
  }
}
