/**
 * @module channels/markets/wire
 * The `markets` channel's wire form (docs/protocol.md "`markets` data"), what the generic code asks
 * of it (channels/definition.ts `ChannelWire`): catalogue filters as stream ids, and upstream's
 * list-form records as received by market id, each an object (or, in an update, null for a market
 * gone).
 */
import { isObject } from '../../util/field-checks.ts';
import type { ChannelWire } from '../definition.ts';

export const marketsWire: ChannelWire = {
  streamIds: { kind: 'catalogue' },
  dataProblem({ data }, snapshot) {
    if (!isObject(data)) return 'data';
    return Object.values(data).every((record) => (!snapshot && record === null) || isObject(record))
      ? undefined
      : 'market records';
  },
};
