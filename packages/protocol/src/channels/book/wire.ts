/**
 * @module channels/book/wire
 * The `book` channel's wire form (docs/protocol.md "`book` data"; its data in ./data.ts): what
 * the generic code asks of it (channels/definition.ts `ChannelWire`): market ids, streams cut to a
 * depth and grouped, a checksum on every message, a compact form of its own (./compact.ts). How
 * an update applies and the checksum are protocol/book.ts's until they move here.
 */
import { isObject } from '../../util/field-checks.ts';
import type { ChannelWire, WireMessage } from '../definition.ts';
import { MARKET_IDS } from '../stream-names.ts';
import { compactBook } from './compact.ts';
import { depthOf, type Level } from './data.ts';

export const bookWire: ChannelWire = {
  streamIds: { kind: MARKET_IDS },
  depths: true,
  checksummed: true,
  compact: compactBook,
  dataProblem({ data, checksum, depth }: WireMessage) {
    if (!isObject(data)) return 'data';
    const { bids, asks, last_price } = data;
    if (!isLevels(bids) || !isLevels(asks)) return 'levels';
    if (last_price !== undefined && typeof last_price !== 'string') return 'last_price';
    if (!Number.isSafeInteger(checksum)) return 'checksum';
    return depthOf({ depth }) === undefined ? 'depth' : undefined;
  },
};

function isLevels(value: unknown): value is Level[] {
  return (
    Array.isArray(value) &&
    value.every(
      (level) =>
        Array.isArray(level) &&
        level.length === 2 &&
        typeof level[0] === 'string' &&
        typeof level[1] === 'string',
    )
  );
}
