/**
 * @module client/subscriptions/subscriptions
 * Subscription bookkeeping: the application's streams by key, and the `subscribe` requests that
 * (re)establish them: one per (channel, depth, book group, interval, threshold, since) group and at most 100 markets each (protocol.md
 * "Client -> relay"), carrying `resume` for every stream that still trusts its state.
 */

import { hasDepths } from '../../../protocol/src/channels/registry.ts';
import { streamKey } from '../../../protocol/src/channels/stream-key.ts';
import {
  type BookDepth,
  type Channel,
  MAX_MARKETS_PER_REQUEST,
  type ResumePoint,
  type SubscribeRequest,
  type UnsubscribeRequest,
} from '../../../protocol/src/protocol/messages.ts';
import type { AnyStreamSubscription } from './channel-subscriptions.ts';

/** A channel with depths names its messages' depth (absent read as the full book); other channels have none. */
export function depthOf(message: { channel: string; depth?: BookDepth }): BookDepth | undefined {
  return hasDepths(message.channel) ? (message.depth ?? null) : undefined;
}

/** A grouped stream's messages (of a channel with depths) name its group step; other streams have none. */
export function groupOf(message: { channel: string; group?: string }): string | undefined {
  return hasDepths(message.channel) ? message.group : undefined;
}

export type SubscribeBody = Omit<SubscribeRequest, 'id'>;
export type UnsubscribeBody = Omit<UnsubscribeRequest, 'id'>;

export class SubscriptionRegistry {
  readonly #streams = new Map<string, AnyStreamSubscription>();

  get size(): number {
    return this.#streams.size;
  }

  /** A grouped book's stream: name its `group` step. */
  get(
    channel: Channel,
    market: string,
    depth: BookDepth | undefined,
    group?: string,
  ): AnyStreamSubscription | undefined {
    return this.#streams.get(streamKey(channel, market, depth, group));
  }

  add(stream: AnyStreamSubscription): void {
    this.#streams.set(streamKey(stream.channel, stream.market, stream.depth, stream.group), stream);
  }

  /** Forgets a stream if it is still the registered one for its key. */
  delete(stream: AnyStreamSubscription): void {
    const key = streamKey(stream.channel, stream.market, stream.depth, stream.group);
    if (this.#streams.get(key) === stream) this.#streams.delete(key);
  }

  /** Every stream of a market on a channel, whatever its depth (stream errors carry no depth). */
  ofMarket(channel: string, market: string): AnyStreamSubscription[] {
    return this.all().filter((stream) => stream.channel === channel && stream.market === market);
  }

  all(): AnyStreamSubscription[] {
    return [...this.#streams.values()];
  }
}

/**
 * The requests that subscribe `streams`; with `resume`, each stream that has a trusted point asks
 * the relay to replay what it missed (protocol.md "Sequencing": resume).
 */
export function subscribeRequests(
  streams: Iterable<AnyStreamSubscription>,
  resume: boolean,
): SubscribeBody[] {
  const requests: SubscribeBody[] = [];
  for (const group of groupByChannelAndDepth(streams)) {
    for (let i = 0; i < group.length; i += MAX_MARKETS_PER_REQUEST) {
      const chunk = group.slice(i, i + MAX_MARKETS_PER_REQUEST);
      const first = chunk[0]!;
      const points: Record<string, ResumePoint> = {};
      // A stream still waiting for its `since` history has no state to resume.
      if (resume && first.since === undefined) {
        for (const stream of chunk) {
          const point = stream.resumePoint;
          if (point !== undefined) points[stream.market] = point;
        }
      }
      requests.push({
        op: 'subscribe',
        channel: first.channel,
        markets: chunk.map((stream) => stream.market),
        ...depthField(first),
        ...(first.group === undefined ? {} : { group: first.group }),
        ...(first.interval === undefined ? {} : { interval: first.interval }),
        ...(first.threshold === undefined ? {} : { threshold: first.threshold }),
        ...(first.since === undefined ? {} : { since: first.since }),
        ...(Object.keys(points).length === 0 ? {} : { resume: points }),
      });
    }
  }
  return requests;
}

export function unsubscribeRequest(stream: AnyStreamSubscription): UnsubscribeBody {
  const group = stream.group === undefined ? {} : { group: stream.group };
  return {
    op: 'unsubscribe',
    channel: stream.channel,
    markets: [stream.market],
    ...depthField(stream),
    ...group,
  };
}

/** The full book is the default depth, so it is sent without `depth`. */
function depthField(stream: AnyStreamSubscription): { depth?: NonNullable<BookDepth> } {
  return stream.depth === undefined || stream.depth === null ? {} : { depth: stream.depth };
}

/** One request per (channel, depth, book group, interval, threshold, since): each is one selection on the wire. */
function groupByChannelAndDepth(streams: Iterable<AnyStreamSubscription>): AnyStreamSubscription[][] {
  const groups = new Map<string, AnyStreamSubscription[]>();
  for (const stream of streams) {
    const key = `${stream.channel}:${stream.depth ?? 'full'}:${stream.group ?? ''}:${stream.interval ?? ''}:${stream.threshold ?? ''}:${stream.since ?? ''}`;
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [stream]);
    else group.push(stream);
  }
  return [...groups.values()];
}
