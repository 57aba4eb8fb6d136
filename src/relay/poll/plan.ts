/**
 * @module relay/poll/plan
 * How often each kind of target is asked within the budget this relay plans with: the intervals
 * (budget.ts), stretched alike when the budget is short, the timing each kind of target
 * gets from them, and, in cluster mode, planning again when this relay's share of the budget moved.
 */
import { PlannedBudget, POLLING_SHARE, type PollIntervals, pollIntervals } from './budget.ts';
import { deadlineSlackMs, type TargetTiming } from './scheduler.ts';

export interface PlanOptions {
  /** A book is never asked for more often than this (ms). */
  bookPollMs: number;
  pricePollMs: number;
  /** Every stream is confirmed at least this often while the budget allows (ms). */
  maxAgeMs: number;
  upstreamRps: number;
  /** Cluster mode: this relay's share of the cluster's budget (0..1, undefined until known). */
  budgetShare?: () => number | undefined;
}

/** The targets a plan is made for. */
export interface PlannedTargets {
  books: number;
  priceMarkets: number;
  priceBatches: number;
  /** Targets of the channels polled one request per stream id. */
  streamTargets: number;
}

export class PollPlan {
  readonly #options: PlanOptions;
  readonly #budget: PlannedBudget;
  #intervals: PollIntervals;

  constructor(options: PlanOptions) {
    this.#options = options;
    this.#budget = new PlannedBudget(options.upstreamRps, options.budgetShare);
    this.#intervals = {
      bookIntervalMs: options.bookPollMs,
      priceIntervalMs: options.pricePollMs,
      stretch: 1,
    };
  }

  get intervals(): PollIntervals {
    return this.#intervals;
  }

  /** Requests per second the polls may start: the planned budget but the share kept free. */
  get pollingRps(): number {
    return this.#budget.rps * POLLING_SHARE;
  }

  /**
   * How often each target can be asked within the budget, for `targets` of which this relay asks
   * for `polledBooks` books itself (not those whose lease another relay holds).
   */
  plan(targets: PlannedTargets, polledBooks: number): PollIntervals {
    this.#intervals = pollIntervals({
      bookMarkets: polledBooks,
      priceMarkets: targets.priceMarkets,
      bookPollMs: this.#options.bookPollMs,
      pricePollMs: this.#options.pricePollMs,
      otherRequestsPerSecond: (targets.streamTargets * 1000) / this.#options.pricePollMs,
      rps: this.#budget.rps,
    });
    return this.#intervals;
  }

  /** Cluster mode: whether this relay's share of the budget moved enough to plan again. */
  shareMoved(): boolean {
    return this.#budget.update();
  }

  bookTiming(): TargetTiming {
    return { minIntervalMs: this.#options.bookPollMs, maxAgeMs: this.#options.maxAgeMs };
  }

  /**
   * Price batches are cheap (100 markets a request): asked at most every `--price-poll-ms` and
   * due by the (stretched) interval. The minimum is never stretched: when the budget is short, who
   * waits is the share groups' choice (relay/poll/share-groups.ts), so that one client holding
   * thousands of streams cannot stretch its neighbours' intervals.
   */
  priceTiming(): TargetTiming {
    return { minIntervalMs: this.#options.pricePollMs, maxAgeMs: this.#intervals.priceIntervalMs };
  }

  /**
   * The other channels' targets are asked at most every `--price-poll-ms` (one cheap request each)
   * and confirmed within the maximum age while the budget allows; as for books, the minimum is
   * never stretched (see `priceTiming`).
   */
  streamTiming(): TargetTiming {
    const interval = this.#options.pricePollMs;
    return { minIntervalMs: interval, maxAgeMs: Math.max(interval, this.#options.maxAgeMs) };
  }

  /** The interval the budget allows the other channels' targets alike: what their staleness is judged by. */
  get streamIntervalMs(): number {
    return Math.ceil(this.#options.pricePollMs * this.#intervals.stretch);
  }

  /** Polls per second the configured intervals ask for `targets`. */
  requestedPerSecond(targets: PlannedTargets): number {
    const { bookPollMs, pricePollMs } = this.#options;
    return (
      (targets.books * 1000) / bookPollMs +
      (targets.priceBatches * 1000) / pricePollMs +
      (targets.streamTargets * 1000) / pricePollMs
    );
  }

  /**
   * The least polls per second that confirm `targets` within the maximum age: every book once per
   * (max age - slack), every batch at its interval, every other target within its maximum age.
   */
  leastForMaxAge(targets: PlannedTargets): number {
    return (
      (targets.books * 1000) / (this.#options.maxAgeMs - deadlineSlackMs(this.bookTiming())) +
      (targets.priceBatches * 1000) / this.#intervals.priceIntervalMs +
      (targets.streamTargets * 1000) / this.streamTiming().maxAgeMs
    );
  }
}
