/**
 * @module channels/trades/relay
 * The `trades` channel's server part: its diff, and the events of its polls. Its poll walks
 * upstream's activity listing (./relay-activity.ts) in a target of its own (relay/targets/trades-target.ts).
 */
import type { ChannelEvents, RelayChannel } from '../relay-definition.ts';
import type { TradesData } from './trades.ts';

/** The entries of `next` that `prev` does not hold, in `next`'s order (oldest first). */
export function diffTrades(prev: TradesData, next: TradesData): TradesData | null {
  const known = new Set(prev.trades.map((trade) => trade.activity_id));
  const trades = next.trades.filter((trade) => !known.has(trade.activity_id));
  return trades.length === 0 ? null : { trades };
}

export const tradesRelay: RelayChannel<unknown, TradesData, TradesData> = { codec: { diff: diffTrades } };

/** The events of the channel's polls, with their fields. */
export interface TradesEventMap {
  /**
   * A trades poll stopped at its entry bound (./relay-activity.ts MAX_ACTIVITY_ENTRIES) before
   * reaching a trade already delivered: the oldest trades of that burst were not delivered.
   * `pages`: the requests it made.
   */
  'trades:truncated': [{ market: string; pages: number }];
}

export const tradesEvents: ChannelEvents<TradesEventMap> = {
  'trades:truncated': {
    log: {
      level: 'warn',
      event: 'trades_truncated',
      message: 'a burst of trades outran the pages one poll reads: its oldest trades were not delivered',
    },
    counter: {
      name: 'trades_truncated_polls_total',
      help: 'Trades polls that stopped at their bound (500 entries) before reaching a delivered trade: the oldest trades of that burst were not delivered.',
    },
  },
};
