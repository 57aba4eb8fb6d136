/**
 * @module protocol/channel-state
 * How a client rebuilds each channel's state after `book` and `price`: its snapshot's data, then
 * every update applied in `seq` order (docs/protocol.md, one section per channel). Pure and shared:
 * the SDK keeps its users' state with these, and the tests rebuild what a client sees with them.
 * A channel with a folder of its own applies there (channels/registry.ts).
 */
import { applyRecordUpdate } from '../channels/records.ts';
import type { MarketData, MarketsData, MarketsUpdateData, MarketUpdateData } from './messages.ts';

/** Changed fields take their new value; a field sent as `null` is gone. */
export function applyMarketUpdate(state: MarketData, update: MarketUpdateData): MarketData {
  return applyRecordUpdate(state, update);
}

/** Changed records replace the old ones whole; a market sent as `null` left the catalogue. */
export function applyMarketsUpdate(state: MarketsData, update: MarketsUpdateData): MarketsData {
  return applyRecordUpdate(state, update);
}
