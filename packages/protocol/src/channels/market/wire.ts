/**
 * @module channels/market/wire
 * The `market` channel's wire form (docs/protocol.md "`market` data"), what the generic code asks
 * of it (channels/definition.ts `ChannelWire`): market ids, and upstream's record as received (any
 * JSON object is a market record or a change set).
 */
import { isObject } from '../../util/field-checks.ts';
import type { ChannelWire } from '../definition.ts';
import { MARKET_IDS } from '../stream-names.ts';

export const marketWire: ChannelWire = {
  streamIds: { kind: MARKET_IDS },
  dataProblem: ({ data }) => (isObject(data) ? undefined : 'data'),
};
