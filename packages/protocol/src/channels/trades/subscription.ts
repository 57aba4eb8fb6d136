/**
 * @module channels/trades/subscription
 * How the SDK holds a `trades` stream (its `TradesSubscription`): the recent trades as its state,
 * and each trade announced once. The relay sends each `activity_id` once per stream, but a new
 * epoch (a relay restart) starts with a snapshot of trades already delivered: the ids already
 * announced are remembered (the most recent TRADES_SEEN_IDS, enough for any snapshot) so that
 * `trade` fires once per trade for the subscription's whole life.
 */
import type { HeldStream } from '../definition.ts';
import { RecentIds } from './recent-ids.ts';
import {
  applyTradesUpdate,
  TRADES_SEEN_IDS,
  TRADES_SNAPSHOT_SIZE,
  type TradeEntry,
  type TradesData,
} from './trades.ts';

/** The recent trades of a market, oldest first: at most as many as a snapshot carries. */
export type TradesState = readonly TradeEntry[];

/** The events a `trades` subscription adds to every stream's. */
export interface TradeEvents {
  /** One trade, once: never again for the same `activity_id`, across resyncs, reconnects and epochs. */
  trade: TradeEntry;
}

/** A new subscription's hold of its stream. */
export function holdTrades(): HeldStream<TradesData, TradesData, TradesState, TradeEvents> {
  const announced = new RecentIds(TRADES_SEEN_IDS);
  return {
    stateOf: (snapshot) => snapshot.trades.slice(-TRADES_SNAPSHOT_SIZE),
    /**
     * The relay sends each id once per stream; an entry the state already holds is still skipped,
     * so that a relay breaking that promise cannot put a trade twice into the list.
     */
    apply(state, update) {
      const held = new Set(state.map((trade) => trade.activity_id));
      const fresh = update.trades.filter((trade) => !held.has(trade.activity_id));
      return fresh.length === 0 ? state : applyTradesUpdate({ trades: [...state] }, { trades: fresh }).trades;
    },
    accepted(data, _state, emit) {
      for (const trade of data.trades) if (announced.add(trade.activity_id)) emit('trade', trade);
    },
  };
}
