/**
 * @module channels/price/wire
 * The `price` channel's wire form (docs/protocol.md "`price` data"), what the generic code asks of
 * it (channels/definition.ts `ChannelWire`): market ids, and data of upstream's decimal strings
 * per field (null in an update: a field upstream stopped sending).
 */
import { isObject } from '../../util/field-checks.ts';
import type { ChannelWire } from '../definition.ts';
import { MARKET_IDS } from '../definition.ts';

export const priceWire: ChannelWire = {
  streamIds: { kind: MARKET_IDS },
  dataProblem({ data }) {
    if (!isObject(data)) return 'data';
    return Object.values(data).every((field) => typeof field === 'string' || field === null)
      ? undefined
      : 'price fields';
  },
};
