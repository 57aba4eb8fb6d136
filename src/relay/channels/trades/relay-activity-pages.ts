/**
 * @module relay/channels/trades/relay-activity-pages
 * One market's activity listing as the walks of ./relay-activity.ts page through it, for the
 * `trades` poll (./relay-poll.ts) and for any other channel that walks the same listing.
 */
import type { MarketActivityResponse } from '../../../upstream/schemas.ts';
import type { FetchActivityPage } from './relay-activity.ts';

/** The upstream call a walk pages with. */
export interface ActivityUpstream {
  /** One page of a market's trade activity, newest first. */
  marketActivity(marketId: string, page: { limit: number; offset: number }): Promise<MarketActivityResponse>;
}

/**
 * Reads pages of `market`'s activity from `source`; `onRequest` hears of each request before it
 * goes out, so the target counts it in its poll (a refusal of a later page is about that page, not
 * about the market).
 */
export function activityPages(
  source: ActivityUpstream,
  market: string,
  onRequest: () => void,
): FetchActivityPage {
  return async (offset, limit) => {
    onRequest();
    const response = await source.marketActivity(market, { limit, offset });
    return { entries: response.activity, hasMore: response.pagination.hasMore };
  };
}
