/**
 * @module relay/poll/budget
 * How often each market can be polled within the upstream request budget. When every subscribed
 * market at its configured interval would need more requests per second than the budget allows,
 * every interval stretches by the same factor, so no market starves (issue: "intervals stretch evenly").
 * In a cluster the budget a relay plans with is its share of the cluster's (`PlannedBudget`).
 */

export interface PollDemand {
  bookMarkets: number;
  priceMarkets: number;
  bookPollMs: number;
  pricePollMs: number;
  /**
   * Requests per second the other channels' targets ask at their configured intervals (one
   * request per target per interval, src/relay/pool/stream-targets.ts).
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
  readonly #share: (() => number | undefined) | undefined;
  #rps: number;

  /** `share`: this relay's share of the cluster's budget (0..1), undefined until known. */
  constructor(upstreamRps: number, share?: () => number | undefined) {
    this.#upstreamRps = upstreamRps;
    this.#share = share;
    this.#rps = upstreamRps;
  }

  get rps(): number {
    return this.#rps;
  }

  /** Follows the share; true when it moved enough that the poller must plan again. */
  update(): boolean {
    const share = this.#share?.();
    if (share === undefined) return false;
    const planned = this.#upstreamRps * Math.max(MIN_PLANNED_SHARE, share);
    if (Math.abs(planned - this.#rps) <= REPLAN_SHARE_CHANGE * this.#upstreamRps) return false;
    this.#rps = planned;
    return true;
  }
}
