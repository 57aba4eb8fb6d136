/**
 * @module channels/market/wire
 * The `market` channel's wire form (docs/protocol.md "`market` data"): its data, how an update
 * applies (changed fields take their new value; a field sent as `null` is gone), and what the
 * generic code asks of it (channels/definition.ts `ChannelWire`): market ids, and upstream's record as received (any
 * JSON object is a market record or a change set).
 */
import { isObject } from '../../util/field-checks.ts';
import type { ChannelWire } from '../definition.ts';
import { MARKET_IDS } from '../definition.ts';
import { applyRecordUpdate, type JsonValue } from '../records.ts';

/** `market` snapshot: upstream's market detail record as received. */
export type MarketData = Record<string, JsonValue>;
/** `market` update: the fields that changed, with their new values; `null` for a field that went away. */
export type MarketUpdateData = Record<string, JsonValue>;
export function applyMarketUpdate(state: MarketData, update: MarketUpdateData): MarketData {
  return applyRecordUpdate(state, update);
}

export const marketWire: ChannelWire = {
  streamIds: { kind: MARKET_IDS },
  dataProblem: ({ data }) => (isObject(data) ? undefined : 'data'),
};
