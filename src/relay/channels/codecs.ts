/**
 * @module relay/channels/codecs
 * The codec of each channel: how two states of it are diffed and whether it carries a checksum
 * (protocol.md "`book` data", "`price` data" and one section per later channel). A stream's state
 * is its snapshot's data: `book`'s sorted, aggregated levels, every other channel's data as sent.
 */
import { crc32 } from 'node:zlib';
import type { DefinedChannel } from '../../../packages/protocol/src/channels/registry.ts';
import { type BookState, bookChecksum } from '../../../packages/protocol/src/protocol/book.ts';
import { restChecksum } from '../../../packages/protocol/src/protocol/json-patch.ts';
import type { Channel, ChannelData, PriceData } from '../../../packages/protocol/src/protocol/messages.ts';
import type { ClobPriceSnapshot } from '../../upstream/contract/schemas.ts';
import { diffBook, diffPrice } from './book-price-diff.ts';
import { diffMarket, diffMarkets } from './channel-diff.ts';
import { diffJson } from './json-patch-diff.ts';
import { type StreamCodec, sendWhole } from './relay-definition.ts';
import { relayChannels } from './relay-registry.ts';

export { type StreamCodec, sendWhole } from './relay-definition.ts';

/** Each channel's stream state and update data. */
export type ChannelState<C extends Channel> = C extends 'book' ? BookState : ChannelData[C]['snapshot'];
export type ChannelDelta<C extends Channel> = ChannelData[C]['update'];

export const codecs: { readonly [C in Channel]: StreamCodec<ChannelState<C>, ChannelDelta<C>> } = {
  // Node's native CRC-32: about a third of the portable one's time, on every book message.
  book: { diff: diffBook, checksum: (state) => bookChecksum(state, crc32) },
  price: { diff: diffPrice },
  market: { diff: diffMarket },
  markets: { diff: diffMarkets },
  rest: {
    diff: (prev, next) => {
      const patch = diffJson(prev, next);
      if (patch === undefined) return sendWhole;
      return patch.length === 0 ? null : patch;
    },
    checksum: (state) => restChecksum(state, crc32),
    noUpdateLargerThanSnapshot: true,
  },
  ...definedCodecs(),
};

/** The codecs of the channels with a folder of their own (channels/relay-registry.ts). */
function definedCodecs(): { readonly [C in DefinedChannel]: StreamCodec<ChannelState<C>, ChannelDelta<C>> } {
  return Object.fromEntries(
    Object.entries(relayChannels).map(([channel, { codec }]) => [channel, codec]),
  ) as { readonly [C in DefinedChannel]: StreamCodec<ChannelState<C>, ChannelDelta<C>> };
}

/** The price channel's state: upstream's decimal strings unchanged, omitted fields omitted. */
export function priceDataOf(snapshot: ClobPriceSnapshot): PriceData {
  const data: PriceData = {};
  if (snapshot.best_bid !== undefined) data.best_bid = snapshot.best_bid;
  if (snapshot.best_ask !== undefined) data.best_ask = snapshot.best_ask;
  if (snapshot.midpoint_price !== undefined) data.midpoint_price = snapshot.midpoint_price;
  if (snapshot.last_price !== undefined) data.last_price = snapshot.last_price;
  if (snapshot.spread !== undefined) data.spread = snapshot.spread;
  return data;
}

/** protocol.md: `ts` is ISO 8601 UTC with milliseconds; upstream's batch prices may omit them. */
export function withMilliseconds(timestamp: string): string {
  return new Date(timestamp).toISOString();
}
