/**
 * @module relay/targets/activity-pages
 * One market's activity listing as the walks of channels/trades/relay-activity.ts page through it, for the
 * `trades` and `candles` targets alike.
 */
import type { FetchActivityPage } from '../../channels/trades/relay-activity.ts';
import type { PollSource } from './poll-target.ts';

/**
 * Reads pages of `market`'s activity from `source`; `onRequest` hears of each request before it
 * goes out, so the target counts it in its poll (a refusal of a later page is about that page, not
 * about the market).
 */
export function activityPages(source: PollSource, market: string, onRequest: () => void): FetchActivityPage {
  return async (offset, limit) => {
    onRequest();
    const response = await source.marketActivity(market, { limit, offset });
    return { entries: response.activity, hasMore: response.pagination.hasMore };
  };
}
