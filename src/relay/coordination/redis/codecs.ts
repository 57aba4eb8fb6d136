/**
 * @module relay/coordination/redis/codecs
 * What cluster-wide streams (relay/coordination/redis/target-streams.ts) add to each channel's
 * numbered codec (relay/coordination/codecs.ts): how a state and the messages read back from Redis
 * are validated, and how a logged message becomes a frame.
 */
import type { z } from 'zod';
import type { BookState } from '../../../../packages/protocol/src/protocol/book.ts';
import type {
  BookData,
  BookDepth,
  PriceData,
  PriceUpdateData,
  ServerMessage,
} from '../../../../packages/protocol/src/protocol/messages.ts';
import { bookStateForm } from '../../channels/book/relay-form.ts';
import type { ChannelDelta, ChannelState } from '../../channels/codecs.ts';
import { priceStateForm } from '../../channels/price/relay-form.ts';
import { hasDepths, type NumberedChannel, numberedChannels } from '../../channels/relay-registry.ts';
import { toFrame } from '../../streams/frame.ts';
import type { SequencedFrame } from '../../streams/stream-identity.ts';
import { bookNumberedCodec, type NumberedCodec, priceNumberedCodec } from '../codecs.ts';
import { type LoggedMessage, parseJson, streamMessage } from './stream-batch.ts';
import type { LoggedUpdate, StoredTarget, StreamPosition } from './stream-log.ts';

export interface ClusterCodec<State, Delta> extends NumberedCodec<State, Delta> {
  /** A target's state as read back from Redis. */
  schema: z.ZodType<State>;
  /** The state a logged snapshot shows, or its delta for an update; undefined for another channel. */
  snapshotState(message: LoggedMessage): State | undefined;
  delta(message: LoggedMessage): Delta | undefined;
}

const book = numberedChannels.book.channel;
const price = numberedChannels.price.channel;

export const bookClusterCodec: ClusterCodec<BookState, BookData> = {
  ...bookNumberedCodec,
  schema: bookStateForm,
  snapshotState: (message) => (message.channel === book ? message.data : undefined),
  delta: (message) => (message.channel === book ? message.data : undefined),
};

export const priceClusterCodec: ClusterCodec<PriceData, PriceUpdateData> = {
  ...priceNumberedCodec,
  schema: priceStateForm,
  snapshotState: (message) =>
    message.channel === price ? priceStateForm.safeParse(message.data).data : undefined,
  delta: (message) => (message.channel === price ? message.data : undefined),
};

const clusterCodecs: { readonly [C in NumberedChannel]: ClusterCodec<ChannelState<C>, ChannelDelta<C>> } = {
  [book]: bookClusterCodec,
  [price]: priceClusterCodec,
};

/** The cluster's codec of `codec`'s channel: the same functions, with what reading Redis needs. */
export function clusterCodecOf<State, Delta>(codec: NumberedCodec<State, Delta>): ClusterCodec<State, Delta> {
  // The channel names the state: a `book` codec's State is BookState, as bookClusterCodec's.
  return clusterCodecs[codec.channel] as unknown as ClusterCodec<State, Delta>;
}

/** The cluster's codec of `channel`, for a stream of it whose state is read through the codec only. */
export function clusterCodecOfChannel(channel: NumberedChannel): ClusterCodec<unknown, unknown> {
  return clusterCodecs[channel] as unknown as ClusterCodec<unknown, unknown>;
}

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
    ...(hasDepths(codec.channel) ? { depth: stream.depth ?? null } : {}),
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
    (message.channel !== book || message.depth === (stream.depth ?? null))
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
