/**
 * @module relay/channels/codecs
 * The codec of each channel: how two states of it are diffed and whether it carries a checksum
 * (protocol.md "`book` data", "`price` data" and one section per later channel). A stream's state
 * is its snapshot's data: `book`'s sorted, aggregated levels, every other channel's data as sent.
 * Every channel brings its codec from its folder (./market/codec.ts, ./markets/codec.ts,
 * ./rest/codec.ts, and the others' through ./relay-registry.ts: `book`'s and `price`'s is their
 * target numbering, ./book/codec.ts and ./price/codec.ts).
 */
import type { DefinedChannel } from '../../../packages/protocol/src/channels/registry.ts';
import type { BookState } from '../../../packages/protocol/src/protocol/book.ts';
import type { Channel, ChannelData } from '../../../packages/protocol/src/protocol/messages.ts';
import { marketCodec } from './market/codec.ts';
import { marketsCodec } from './markets/codec.ts';
import type { StreamCodec } from './relay-definition.ts';
import { type DepthChannel, numberedChannels, relayChannels } from './relay-registry.ts';
import { restCodec } from './rest/codec.ts';

export { type StreamCodec, sendWhole } from './relay-definition.ts';

/** Each channel's stream state and update data. */
export type ChannelState<C extends Channel> = C extends DepthChannel ? BookState : ChannelData[C]['snapshot'];
export type ChannelDelta<C extends Channel> = ChannelData[C]['update'];

export const codecs: { readonly [C in Channel]: StreamCodec<ChannelState<C>, ChannelDelta<C>> } = {
  book: numberedChannels.book,
  price: numberedChannels.price,
  market: marketCodec,
  markets: marketsCodec,
  rest: restCodec,
  ...definedCodecs(),
};

/** The codecs of the channels with a folder of their own (channels/relay-registry.ts). */
function definedCodecs(): { readonly [C in DefinedChannel]: StreamCodec<ChannelState<C>, ChannelDelta<C>> } {
  return Object.fromEntries(
    Object.entries(relayChannels).map(([channel, { codec }]) => [channel, codec]),
  ) as { readonly [C in DefinedChannel]: StreamCodec<ChannelState<C>, ChannelDelta<C>> };
}
