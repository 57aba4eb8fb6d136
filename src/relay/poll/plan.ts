/**
 * @module relay/poll/plan
 * How often each kind of target is asked within the upstream request budget. When every subscribed
 * market at its configured interval would need more requests per second than the budget allows,
 * every interval stretches by the same factor, so no market starves (issue: "intervals stretch
 * evenly"). In a cluster the budget a relay plans with is its share of the cluster's
 * (`PlannedBudget`), planned again when that share moves; the plan (`PollPlan`) gives each kind of
 * target its timing from those intervals.
 */
import { deadlineSlackMs, type TargetTiming } from './scheduler.ts';

export interface PollDemand {
  bookMarkets: number;
  priceMarkets: number;
  bookPollMs: number;
  pricePollMs: number;
  /**
   * Requests per second the other channels' targets ask at their configured intervals (one
   * request per target per interval, relay/poll/stream-targets.ts).
   */
  otherRequestsPerSecond?: number;
  /** Upstream requests per second at most. */
  rps: number;
}

export interface PollIntervals {
  bookIntervalMs: number;
  priceIntervalMs: number;
  /** >= 1; 1 means every market is polled at its configured interval. */
  stretch: number;
}

/** A price batch request covers at most this many markets (docs/upstream.md). */
export const PRICE_BATCH_SIZE = 100;

/**
 * Keeps a tenth of the budget free for retries and for the one-off requests of the status page,
 * so that polling alone never saturates the rate limiter.
 */
export const POLLING_SHARE = 0.9;

export function pollIntervals(demand: PollDemand): PollIntervals {
  const priceRequests = Math.ceil(demand.priceMarkets / PRICE_BATCH_SIZE);
  const requestsPerSecond =
    (demand.bookMarkets * 1000) / demand.bookPollMs +
    (priceRequests * 1000) / demand.pricePollMs +
    (demand.otherRequestsPerSecond ?? 0);
  const budget = demand.rps * POLLING_SHARE;
  const stretch = requestsPerSecond > budget ? requestsPerSecond / budget : 1;
  return {
    bookIntervalMs: Math.ceil(demand.bookPollMs * stretch),
    priceIntervalMs: Math.ceil(demand.pricePollMs * stretch),
    stretch,
  };
}

/**
 * The requests per second a relay's poller plans with (docs/cluster.md "One budget"): all of
 * `--upstream-rps` for a relay alone; in a cluster, this relay's share of it as Redis reports it.
 */

/**
 * A relay plans with at least this share of the cluster's budget: one whose peers spend it all has
 * a share near 0 and would otherwise never poll enough to learn a larger one (the shared bucket in
 * Redis still holds the cluster to the whole budget).
 */
const MIN_PLANNED_SHARE = 0.1;
/** A change of share smaller than this (of the whole budget) leaves the plan as it is. */
const REPLAN_SHARE_CHANGE = 0.1;

export class PlannedBudget {
  readonly #upstreamRps: number;
  readonly #shares: BudgetShares | undefined;
  #rps: number;

  constructor(upstreamRps: number, shares?: BudgetShares) {
    this.#upstreamRps = upstreamRps;
    this.#shares = shares;
    this.#rps = upstreamRps;
  }

  get rps(): number {
    return this.#rps;
  }

  /** Follows the share; true when it moved enough that the poller must plan again. */
  update(): boolean {
    const share = this.#shares?.budgetShare();
    if (share === undefined) return false;
    const planned = this.#upstreamRps * Math.max(MIN_PLANNED_SHARE, share);
    if (Math.abs(planned - this.#rps) <= REPLAN_SHARE_CHANGE * this.#upstreamRps) return false;
    this.#rps = planned;
    return true;
  }
}

export interface PlanOptions {
  /** A book is never asked for more often than this (ms). */
  bookPollMs: number;
  pricePollMs: number;
  /** Every stream is confirmed at least this often while the budget allows (ms). */
  maxAgeMs: number;
  upstreamRps: number;
  /** Cluster mode: this relay's share of the cluster's budget (the broker's, relay/coordination/broker.ts). */
  shares?: BudgetShares;
}

/** Where this relay's share of the cluster's budget is read: 0..1, undefined until known (a relay alone). */
export interface BudgetShares {
  budgetShare(): number | undefined;
}

/**
 * The kinds of target the plan times apart: books at `--book-poll-ms`, price batches and the
 * targets of the channels polled per stream id at `--price-poll-ms`, each judged by its own interval.
 */
export type PlanKind = 'book' | 'price' | 'stream';

/** The kinds whose measured interval the freshness report gives (`effectiveIntervalMs`). */
export const REPORTED_KINDS = ['book', 'price'] as const satisfies readonly PlanKind[];
export type ReportedKind = (typeof REPORTED_KINDS)[number];

/** The targets a plan is made for. */
export interface PlannedTargets {
  books: number;
  /** Books this relay asks for itself: not those whose lease another relay holds. */
  polledBooks: number;
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
    this.#budget = new PlannedBudget(options.upstreamRps, options.shares);
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

  /** The maximum age every stream promises (ms). */
  get maxAgeMs(): number {
    return this.#options.maxAgeMs;
  }

  /** How often a target of `kind` is asked for now, at most (the stretched interval). */
  intervalOf(kind: PlanKind): number {
    if (kind === 'book') return this.#intervals.bookIntervalMs;
    return kind === 'price' ? this.#intervals.priceIntervalMs : this.streamIntervalMs;
  }

  /** How often each target can be asked within the budget, for `targets`. */
  plan(targets: PlannedTargets): PollIntervals {
    this.#intervals = pollIntervals({
      bookMarkets: targets.polledBooks,
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
