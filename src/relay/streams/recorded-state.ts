/**
 * @module relay/streams/recorded-state
 * A stream's state at a time, rebuilt from its record (docs/protocol.md "History and replay"): the
 * last recorded `snapshot` at or before the time with every recorded `update` after it applied, in
 * order, by the channel's own rule, the one a client applies (each channel's section of
 * docs/protocol.md). The state is exactly what a client of the live stream held after the last
 * message at or before the time, and its checksum the one that message carried. Pure.
 */

import { applyMarketUpdate } from '../../../packages/protocol/src/channels/market/wire.ts';
import { applyMarketsUpdate } from '../../../packages/protocol/src/channels/markets/wire.ts';
import { applyPriceUpdate } from '../../../packages/protocol/src/channels/price/price.ts';
import { channelDefinitions, isDefinedChannel } from '../../../packages/protocol/src/channels/registry.ts';
import { applyBookUpdate, type BookState } from '../../../packages/protocol/src/protocol/book.ts';
import { applyPatch, type PatchOperationIn } from '../../../packages/protocol/src/protocol/json-patch.ts';
import type {
  BookData,
  Channel,
  JsonValue,
  MarketData,
  MarketsData,
  MarketsUpdateData,
  MarketUpdateData,
  PriceData,
  PriceUpdateData,
} from '../../../packages/protocol/src/protocol/messages.ts';
import type { RecordedMessage } from '../../history/store.ts';

type Apply = (state: unknown, update: unknown) => unknown;

// The record holds what the stream sent: the channel names which types its data has.
const appliers: { readonly [C in Exclude<Channel, keyof typeof channelDefinitions>]: Apply } = {
  book: (state, update) => applyBookUpdate(state as BookState, update as BookData),
  price: (state, update) => applyPriceUpdate(state as PriceData, update as PriceUpdateData),
  market: (state, update) => applyMarketUpdate(state as MarketData, update as MarketUpdateData),
  markets: (state, update) => applyMarketsUpdate(state as MarketsData, update as MarketsUpdateData),
  rest: (state, update) => applyPatch(state as JsonValue, update as PatchOperationIn[]),
};

/** `channel`'s state after `update` is applied to `state`. */
export function applyRecorded(channel: Channel, state: unknown, update: unknown): unknown {
  if (isDefinedChannel(channel)) return (channelDefinitions[channel].apply as Apply)(state, update);
  return appliers[channel](state, update);
}

/** A stream's state after its last message folded in, and that message. */
export interface FoldedState {
  state: unknown;
  at: RecordedMessage;
}

/**
 * Folds one recorded message into `folded`: a snapshot starts the state again, an update applies
 * to it; an update that does not follow the state's message (the record cut by its retention, or a
 * write lost) leaves no state until the next snapshot.
 */
export function foldRecorded(
  folded: FoldedState | undefined,
  message: RecordedMessage,
): FoldedState | undefined {
  const data: unknown = JSON.parse(message.data);
  if (message.type === 'snapshot') return { state: data, at: message };
  const follows =
    folded !== undefined && folded.at.epoch === message.epoch && folded.at.seq + 1 === message.seq;
  if (!follows) return undefined;
  return { state: applyRecorded(message.channel as Channel, folded.state, data), at: message };
}
