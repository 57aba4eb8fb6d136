/**
 * @module relay/coordination/redis/codecs
 * What cluster-wide streams need to know of each channel (relay/coordination/redis/target-streams.ts): the streams of
 * one poll target (a market's book at every depth, or its price), how each is cut from the
 * target's state, how its messages are built, diffed and applied, and how a state read back from
 * Redis is validated.
 */
import type { z } from 'zod';
import { applyBookUpdate, type BookState } from '../../../protocol/book.ts';
import {
  type BookData,
  type BookDepth,
  bookDepths,
  type Channel,
  type PriceData,
  type PriceUpdateData,
  type ServerMessage,
} from '../../../protocol/messages.ts';
import { applyPriceUpdate } from '../../../protocol/price.ts';
import { limitDepth } from '../../channels/aggregate.ts';
import { diffBook, diffPrice } from '../../channels/book-price-diff.ts';
import { codecs, type StreamCodec } from '../../channels/codecs.ts';
import { toFrame } from '../../streams/frame.ts';
import type { StreamRegistry } from '../../streams/registry.ts';
import type { SequencedFrame, Stream } from '../../streams/stream.ts';
import { bookState, type LoggedMessage, parseJson, priceState, streamMessage } from './stream-batch.ts';
import type { LoggedUpdate, StoredTarget, StreamPosition } from './stream-log.ts';

/** One stream of a target: its name in the target's Redis state, and its depth (`book`). */
export interface TargetStream {
  field: string;
  depth: BookDepth | undefined;
}

export interface ClusterCodec<State, Delta> extends StreamCodec<State, Delta> {
  /** Cluster-wide streams (`book`, `price`) always have an update to send when their state changed. */
  diff(prev: State, next: State): Delta | null;
  channel: Channel;
  /** Every stream of a target, produced by its holder whether or not anyone here subscribes. */
  streams: readonly TargetStream[];
  /** A target's state as read back from Redis. */
  schema: z.ZodType<State>;
  /** The state of one of the target's streams, cut from the target's state. */
  project(state: State, depth: BookDepth | undefined): State;
  apply(state: State, delta: Delta): State;
  /** The state a logged snapshot shows, or its delta for an update; undefined for another channel. */
  snapshotState(message: LoggedMessage): State | undefined;
  delta(message: LoggedMessage): Delta | undefined;
  /** This relay's stream of `market` at `depth`, if anyone here subscribes to it. */
  local(
    registry: StreamRegistry,
    market: string,
    depth: BookDepth | undefined,
  ): Stream<State, Delta> | undefined;
}

export const bookClusterCodec: ClusterCodec<BookState, BookData> = {
  ...codecs.book,
  diff: diffBook,
  channel: 'book',
  streams: [null, ...bookDepths].map((depth) => ({ field: depth === null ? 'full' : String(depth), depth })),
  schema: bookState,
  project: (state, depth) => limitDepth(state, depth ?? null),
  apply: applyBookUpdate,
  snapshotState: (message) => (message.channel === 'book' ? message.data : undefined),
  delta: (message) => (message.channel === 'book' ? message.data : undefined),
  local(registry, market, depth) {
    for (const stream of registry.streamsOf('book', market)) if (stream.depth === depth) return stream;
    return undefined;
  },
};

export const priceClusterCodec: ClusterCodec<PriceData, PriceUpdateData> = {
  ...codecs.price,
  diff: diffPrice,
  channel: 'price',
  streams: [{ field: 'price', depth: undefined }],
  schema: priceState,
  project: (state) => state,
  apply: applyPriceUpdate,
  snapshotState: (message) =>
    message.channel === 'price' ? priceState.safeParse(message.data).data : undefined,
  delta: (message) => (message.channel === 'price' ? message.data : undefined),
  local: (registry, market) => {
    const [stream] = registry.streamsOf('price', market);
    return stream;
  },
};

/** A `snapshot` or `update` of one of a target's streams, as the holder numbers it. */
export function clusterMessage<State, Delta>(
  codec: ClusterCodec<State, Delta>,
  stream: { market: string; depth: BookDepth | undefined },
  type: 'snapshot' | 'update',
  position: StreamPosition,
  times: { ts: string; rts: string },
  data: State | Delta,
  after: State,
): ServerMessage {
  const checksum = codec.checksum?.(after);
  // Keys in the order relay/streams/stream.ts writes them, so every relay's frames read the same.
  return {
    type,
    channel: codec.channel,
    market: stream.market,
    epoch: position.epoch,
    seq: position.seq,
    ts: times.ts,
    rts: times.rts,
    ...(codec.channel === 'book' ? { depth: stream.depth ?? null } : {}),
    data,
    ...(checksum === undefined ? {} : { checksum }),
  } as ServerMessage;
}

/** The name in the target's Redis state of its stream at `depth`. */
export function fieldOf<State, Delta>(
  codec: ClusterCodec<State, Delta>,
  depth: BookDepth | undefined,
): string {
  return codec.streams.find((stream) => stream.depth === depth)?.field ?? '';
}

/** A logged message of `market`'s stream at `depth`, at `position`. */
export function fits<State, Delta>(
  codec: ClusterCodec<State, Delta>,
  message: LoggedMessage,
  stream: { market: string; depth: BookDepth | undefined },
  position: StreamPosition,
): boolean {
  return (
    message.channel === codec.channel &&
    message.market === stream.market &&
    message.epoch === position.epoch &&
    message.seq === position.seq &&
    (message.channel !== 'book' || message.depth === (stream.depth ?? null))
  );
}

/**
 * The logged updates after `afterSeq` of a stream in `epoch`, validated, as frames; undefined when
 * one is malformed, of another stream or out of order (a stream's history is all or nothing).
 */
export function loggedFrames<State, Delta>(
  codec: ClusterCodec<State, Delta>,
  stream: { market: string; depth: BookDepth | undefined },
  epoch: string,
  logged: readonly LoggedUpdate[],
  afterSeq: number,
): SequencedFrame[] | undefined {
  const frames: SequencedFrame[] = [];
  for (const { seq, text } of logged) {
    if (seq <= afterSeq) continue;
    const message = parseJson(streamMessage, text);
    if (message === undefined || seq !== afterSeq + frames.length + 1) return undefined;
    if (!fits(codec, message, stream, { epoch, seq })) return undefined;
    frames.push({ seq, frame: toFrame(message) });
  }
  return frames;
}

/** A stored target's state, validated; undefined when unreadable. */
export function storedState<State, Delta>(
  codec: ClusterCodec<State, Delta>,
  stored: StoredTarget,
): State | undefined {
  let json: unknown;
  try {
    json = JSON.parse(stored.state);
  } catch {
    return undefined;
  }
  return codec.schema.safeParse(json).data;
}
