/**
 * @module relay/channels/trades/relay-poll
 * How the relay polls one market's trade prints (docs/protocol.md "`trades` data"): a poll walks
 * upstream's activity pages down to the first entry its stream already delivered
 * (./relay-activity.ts) and publishes what is new, oldest first. Pages after the first are extra
 * requests inside the upstream client's rate limit, needed only when more than a page of trades
 * happened between two polls. In cluster mode only the lease holder asks upstream; it shares the
 * new entries with the most recent ones, and the others deliver what their own stream has not
 * (relay/poll/incremental-target.ts runs it).
 */

import { z } from 'zod';
import type { TradesData } from '../../../../packages/protocol/src/channels/trades/trades.ts';
import { marketActivityEntry } from '../../../upstream/schemas.ts';
import type { PolledIncrementally } from '../relay-definition.ts';
import { sharedWindow, TradeHistory, tradesStates, walkActivity } from './relay-activity.ts';
import { type ActivityUpstream, activityPages } from './relay-activity-pages.ts';

/** The events of the channel's polls, with their fields. */
export interface TradesEventMap {
  /**
   * A trades poll stopped at its entry bound (./relay-activity.ts MAX_ACTIVITY_ENTRIES) before
   * reaching a trade already delivered: the oldest trades of that burst were not delivered.
   * `pages`: the requests it made.
   */
  'trades:truncated': [{ market: string; pages: number }];
}

export const tradesPoll: PolledIncrementally<
  ActivityUpstream,
  TradesData,
  TradeHistory,
  TradesData,
  TradesEventMap
> = {
  memory: () => new TradeHistory(),
  async read(upstream, market, history, { onRequest, emit }) {
    const walk = await walkActivity(activityPages(upstream, market, onRequest), history.seen, {
      firstPoll: !history.started,
      listing: history.listing,
    });
    if (!walk.complete) emit('trades:truncated', { market, pages: walk.pages });
    return { trades: walk.fresh };
  },
  statesOf: (state, fresh, history) => tradesStates(state, history.absorb(fresh.trades)),
  shared: (state, fresh) => ({ trades: [...sharedWindow(state, fresh.trades)] }),
  schema: z.object({ trades: z.array(marketActivityEntry) }),
};
