/**
 * @module relay/channels/trades/relay
 * The `trades` channel's server part: its diff, its poll (./relay-poll.ts, walking upstream's
 * activity listing, ./relay-activity.ts), its history since a time or an `activity_id`
 * (./relay-since.ts, with the record: ./relay-since-record.ts), and what the events of its polls log
 * and count.
 */
import type { TradeEntry, TradesData } from '../../../../packages/protocol/src/channels/trades/trades.ts';
import type { ChannelEvents, RelayChannel } from '../relay-definition.ts';
import { entryHistory } from '../relay-entry-history.ts';
import type { ActivityUpstream } from './relay-activity-pages.ts';
import { type TradesEventMap, tradesPoll } from './relay-poll.ts';
import { readMarketSince } from './relay-since-record.ts';

/** The entries of `next` that `prev` does not hold, in `next`'s order (oldest first). */
export function diffTrades(prev: TradesData, next: TradesData): TradesData | null {
  const known = new Set(prev.trades.map((trade) => trade.activity_id));
  const trades = next.trades.filter((trade) => !known.has(trade.activity_id));
  return trades.length === 0 ? null : { trades };
}

/** A market's trades since a time or an `activity_id`, read from its activity pages. */
const tradesHistory = entryHistory<ActivityUpstream, TradesData, TradeEntry>({
  read: readMarketSince,
  entriesOf: (data) => data.trades,
  dataOf: (trades) => ({ trades }),
  idOf: (entry) => entry.activity_id,
  timeOf: (entry) => Date.parse(entry.activity_timestamp),
  idName: 'activity_id',
});

export const tradesRelay: RelayChannel<ActivityUpstream, TradesData, TradesData, TradesEventMap> = {
  codec: { diff: diffTrades },
  incremental: tradesPoll,
  history: tradesHistory,
};

/** What the channel's events log and count. */
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
