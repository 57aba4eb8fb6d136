/**
 * @module client/history/replayed-streams
 * The streams a replay keeps its state in: the same subscription classes the live client holds,
 * so that a replayed message is applied and its checksum verified exactly as a live one is
 * (../subscriptions/stream-subscription.ts), on a host that asks nothing of the relay: a record
 * cannot be asked again for a snapshot, so a lost continuity is told to the reader instead.
 */
import type { BookDepth, Channel } from '../../../protocol/src/protocol/messages.ts';
import {
  type AnyStreamSubscription,
  type ChannelSubscriptions,
  channelSubscription,
} from '../subscriptions/channel-subscriptions.ts';
import type { StreamHost } from '../subscriptions/stream-subscription.ts';

/** The stream each channel's replayed messages are kept in. */
export type ReplayedStreams = ChannelSubscriptions;

export type ReplayedStreamOf<C extends Channel> = C extends keyof ReplayedStreams
  ? ReplayedStreams[C]
  : AnyStreamSubscription;

/** A host that never asks the relay anything: requests for a snapshot are the reader's to hear. */
export function detachedHost(reportListenerError: (error: unknown) => void): StreamHost {
  return { requestSnapshot: () => {}, release: () => {}, reportListenerError };
}

/** A new stream of `channel`'s `market` (a book's of `depth` and `group`) on `host`. */
export function replayedStream<C extends Channel>(
  channel: C,
  market: string,
  host: StreamHost,
  depth: BookDepth,
  group: string | undefined,
): ReplayedStreamOf<C> {
  return channelSubscription(channel, market, host, depth, group) as ReplayedStreamOf<C>;
}
