/**
 * @module channels/trades/trades
 * The `trades` channel's Node-free part (docs/protocol.md "`trades` data"): a market's trade prints
 * as upstream's activity entries, unchanged. Snapshot: the most recent {@link TRADES_SNAPSHOT_SIZE}
 * entries, oldest first; update: the entries new since the previous message, oldest first, each
 * `activity_id` once per stream.
 */
import { type FieldTypes, isListOf } from '../../util/field-checks.ts';
import type { ChannelDefinition } from '../definition.ts';
import { MARKET_IDS } from '../definition.ts';
import { checkSince } from './since.ts';

/** Upstream's market activity entry, unchanged. */
export interface TradeEntry {
  activity_id: string;
  activity_type: string;
  price: string;
  size: string;
  total_value: string;
  activity_timestamp: string;
}
export interface TradesData {
  trades: TradeEntry[];
}

/** A snapshot carries this many of the most recent entries (and a client keeps as many). */
export const TRADES_SNAPSHOT_SIZE = 50;

/**
 * `activity_id`s a consumer remembers to deliver each trade once across reconnects and new epochs.
 * A new epoch's snapshot holds at most TRADES_SNAPSHOT_SIZE (50) entries, and those already
 * delivered are among the newest delivered, so any capacity of at least that size suffices; the
 * margin covers upstream listing a few entries out of time order.
 */
export const TRADES_SEEN_IDS = 1_000;

/** The new entries after the known ones, the most recent {@link TRADES_SNAPSHOT_SIZE} kept. */
export function applyTradesUpdate(state: TradesData, update: TradesData): TradesData {
  return { trades: [...state.trades, ...update.trades].slice(-TRADES_SNAPSHOT_SIZE) };
}

const tradeFields: FieldTypes = {
  activity_id: 'string',
  activity_type: 'string',
  price: 'string',
  size: 'string',
  total_value: 'string',
  activity_timestamp: 'string',
};

export const trades: ChannelDefinition<TradesData, TradesData> = {
  streamIds: { kind: MARKET_IDS },
  // Each trade is announced once: a paced subscriber would miss those beyond the recent window.
  events: true,
  history: { check: checkSince },
  apply: applyTradesUpdate,
  dataProblem: ({ data }) => (isListOf(data.trades, tradeFields) ? undefined : 'trades'),
};
