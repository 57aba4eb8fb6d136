/**
 * @module relay/channels/channel-diff
 * What changed between two successive states of the channels after `book` and `price`, as their
 * `update` data (docs/protocol.md, one section per channel); `null` when nothing did, so no update
 * is sent. Each is the inverse of its apply function in protocol/channel-state.ts: applying
 * `diff(prev, next)` to `prev` gives `next` (test/relay/channels/channel-diff.property.test.ts).
 */

import { diffRecord, sameJson } from '../../../packages/protocol/src/channels/records.ts';
import type {
  MarketData,
  MarketListRecord,
  MarketsData,
  MarketsUpdateData,
  MarketUpdateData,
} from '../../../packages/protocol/src/protocol/messages.ts';

/** The fields whose value changed (compared as JSON), `null` for a field gone. */
export function diffMarket(prev: MarketData, next: MarketData): MarketUpdateData | null {
  return diffRecord(prev, next, sameJson);
}

/** The catalogue's records new or changed (whole), `null` for a market gone from it. */
export function diffMarkets(prev: MarketsData, next: MarketsData): MarketsUpdateData | null {
  return diffRecord<MarketListRecord>(prev, next, sameJson);
}
