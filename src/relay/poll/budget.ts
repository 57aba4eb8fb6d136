/**
 * @module relay/poll/budget
 * How often each market can be polled within the upstream request budget. When every subscribed
 * market at its configured interval would need more requests per second than the budget allows,
 * every interval stretches by the same factor, so no market starves (issue: "intervals stretch evenly").
 */

export interface PollDemand {
  bookMarkets: number;
  priceMarkets: number;
  bookPollMs: number;
  pricePollMs: number;
  /**
   * Requests per second the other channels' targets ask at their configured intervals (one
   * request per target per interval: market records, oracle feeds, the probabilities map).
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
const POLLING_SHARE = 0.9;

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
