/**
 * @module relay/channels/markets/diff
 * What changed between two successive states of the `markets` catalogue, as its `update` data
 * (docs/protocol.md "`markets` data"); `null` when nothing did, so no update is sent. The inverse of
 * its apply function in the wire package's channels/markets/wire.ts (test/relay/channels/market/diff.property.test.ts).
 */

import { diffRecord, sameJson } from '../../../../packages/protocol/src/channels/records.ts';
import type {
  MarketListRecord,
  MarketsData,
  MarketsUpdateData,
} from '../../../../packages/protocol/src/protocol/messages.ts';

/** The catalogue's records new or changed (whole), `null` for a market gone from it. */
export function diffMarkets(prev: MarketsData, next: MarketsData): MarketsUpdateData | null {
  return diffRecord<MarketListRecord>(prev, next, sameJson);
}
