/**
 * @module relay/coordination/codecs
 * What numbering the streams of one poll target needs to know of each channel, whichever broker
 * numbers them: the channel's target numbering (relay/channels/<channel>/codec.ts: the
 * target's streams, how each is cut from the target's state, how its messages are diffed and
 * applied) and how to find this relay's stream of each, which the cluster's numbering asks one
 * stream at a time (a relay alone serves all of a market's at once: those its target keeps, or
 * else the registry's, relay/coordination/local/broker.ts). What reading them back from Redis adds
 * is the Redis broker's own (relay/coordination/redis/codecs.ts).
 */

import type { BookDepth } from '../../../packages/protocol/src/protocol/messages.ts';
import type { ChannelDelta, ChannelState } from '../channels/codecs.ts';
import type { TargetNumbering } from '../channels/relay-definition.ts';
import { type NumberedChannel, numberedChannels } from '../channels/relay-registry.ts';
import type { StreamRegistry } from '../streams/registry.ts';
import type { Stream } from '../streams/stream.ts';

export type { TargetStream } from '../channels/relay-definition.ts';

export interface NumberedCodec<State, Delta> extends TargetNumbering<NumberedChannel, State, Delta> {
  /** This relay's stream of `market` at `depth`, if anyone here subscribes to it. */
  local(
    registry: StreamRegistry,
    market: string,
    depth: BookDepth | undefined,
  ): Stream<State, Delta> | undefined;
}

function numberedCodecOf<C extends NumberedChannel>(
  numbering: TargetNumbering<C, ChannelState<C>, ChannelDelta<C>>,
): NumberedCodec<ChannelState<C>, ChannelDelta<C>> {
  return {
    ...numbering,
    local(registry, market, depth) {
      // A grouped stream is numbered by each relay from the target it polled or was shared
      // (relay/channels/book/book-target.ts); a stream without depths has none on either side.
      for (const stream of registry.streamsOf(numbering.channel, market))
        if (stream.depth === depth && stream.group === undefined) return stream;
      return undefined;
    },
  };
}

export const bookNumberedCodec = numberedCodecOf(numberedChannels.book);
export const priceNumberedCodec = numberedCodecOf(numberedChannels.price);
