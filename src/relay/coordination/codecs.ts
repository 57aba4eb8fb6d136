/**
 * @module relay/coordination/codecs
 * What numbering the streams of one poll target needs to know of each channel, whichever broker
 * numbers them: the target's streams (a market's book at every depth, or its price), how each is
 * cut from the target's state, and how its messages are built, diffed and applied. What reading
 * them back from Redis adds is the Redis broker's own (relay/coordination/redis/codecs.ts).
 */

import { applyBookUpdate, type BookState, limitDepth } from '../../../packages/protocol/src/protocol/book.ts';
import {
  type BookData,
  type BookDepth,
  bookDepths,
  type PriceData,
  type PriceUpdateData,
} from '../../../packages/protocol/src/protocol/messages.ts';
import { applyPriceUpdate } from '../../../packages/protocol/src/protocol/price.ts';
import { diffBook } from '../channels/book/diff.ts';
import { codecs, type StreamCodec } from '../channels/codecs.ts';
import { diffPrice } from '../channels/price/diff.ts';
import type { StreamRegistry } from '../streams/registry.ts';
import type { Stream } from '../streams/stream.ts';

/** One stream of a target: its name in the target's state, and its depth (`book`). */
export interface TargetStream {
  field: string;
  depth: BookDepth | undefined;
}

export interface NumberedCodec<State, Delta> extends StreamCodec<State, Delta> {
  /** Numbered streams (`book`, `price`) always have an update to send when their state changed. */
  diff(prev: State, next: State): Delta | null;
  channel: 'book' | 'price';
  /** Every stream of a target, numbered whether or not anyone here subscribes. */
  streams: readonly TargetStream[];
  /** The state of one of the target's streams, cut from the target's state. */
  project(state: State, depth: BookDepth | undefined): State;
  apply(state: State, delta: Delta): State;
  /** This relay's stream of `market` at `depth`, if anyone here subscribes to it. */
  local(
    registry: StreamRegistry,
    market: string,
    depth: BookDepth | undefined,
  ): Stream<State, Delta> | undefined;
}

export const bookNumberedCodec: NumberedCodec<BookState, BookData> = {
  ...codecs.book,
  diff: diffBook,
  channel: 'book',
  streams: [null, ...bookDepths].map((depth) => ({ field: depth === null ? 'full' : String(depth), depth })),
  project: (state, depth) => limitDepth(state, depth ?? null),
  apply: applyBookUpdate,
  local(registry, market, depth) {
    // A grouped book is numbered by each relay from the book it polled or was shared (relay/targets/book-target.ts).
    for (const stream of registry.streamsOf('book', market))
      if (stream.depth === depth && stream.group === undefined) return stream;
    return undefined;
  },
};

export const priceNumberedCodec: NumberedCodec<PriceData, PriceUpdateData> = {
  ...codecs.price,
  diff: diffPrice,
  channel: 'price',
  streams: [{ field: 'price', depth: undefined }],
  project: (state) => state,
  apply: applyPriceUpdate,
  local: (registry, market) => {
    const [stream] = registry.streamsOf('price', market);
    return stream;
  },
};
