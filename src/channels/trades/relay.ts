/**
 * @module channels/trades/relay
 * The `trades` channel's server part: its diff. Its poll walks upstream's activity listing
 * (./relay-activity.ts) in a target of its own (relay/targets/trades-target.ts).
 */
import type { RelayChannel } from '../relay-definition.ts';
import type { TradesData } from './trades.ts';

/** The entries of `next` that `prev` does not hold, in `next`'s order (oldest first). */
export function diffTrades(prev: TradesData, next: TradesData): TradesData | null {
  const known = new Set(prev.trades.map((trade) => trade.activity_id));
  const trades = next.trades.filter((trade) => !known.has(trade.activity_id));
  return trades.length === 0 ? null : { trades };
}

export const tradesRelay: RelayChannel<unknown, TradesData, TradesData> = { codec: { diff: diffTrades } };
