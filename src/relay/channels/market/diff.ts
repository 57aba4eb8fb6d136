/**
 * @module relay/channels/market/diff
 * What changed between two successive states of a `market` stream, as its `update` data
 * (docs/protocol.md "`market` data"); `null` when nothing did, so no update is sent. The inverse of
 * its apply function in the wire package's channels/market/wire.ts: applying `diff(prev, next)` to `prev` gives
 * `next` (test/relay/channels/market/diff.property.test.ts).
 */

import { diffRecord, sameJson } from '../../../../packages/protocol/src/channels/records.ts';
import type { MarketData, MarketUpdateData } from '../../../../packages/protocol/src/protocol/messages.ts';

/** The fields whose value changed (compared as JSON), `null` for a field gone. */
export function diffMarket(prev: MarketData, next: MarketData): MarketUpdateData | null {
  return diffRecord(prev, next, sameJson);
}
