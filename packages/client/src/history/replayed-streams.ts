/**
 * @module client/history/replayed-streams
 * The streams a replay keeps its state in: the same subscription classes the live client holds,
 * so that a replayed message is applied and its checksum verified exactly as a live one is
 * (../subscriptions/stream-subscription.ts), on a host that asks nothing of the relay: a record
 * cannot be asked again for a snapshot, so a lost continuity is told to the reader instead.
 */
import type { DefinedChannel } from '../../../protocol/src/channels/registry.ts';
import type { BookDepth, Channel } from '../../../protocol/src/protocol/messages.ts';
import {
  type AnyStreamSubscription,
  BookSubscription,
  DefinedSubscription,
  MarketSubscription,
  MarketsSubscription,
  PriceSubscription,
} from '../subscriptions/channel-subscriptions.ts';
import { RestSubscription } from '../subscriptions/rest-subscription.ts';
import type { StreamHost } from '../subscriptions/stream-subscription.ts';

/** The stream each channel's replayed messages are kept in. */
export type ReplayedStreams = {
  book: BookSubscription;
  price: PriceSubscription;
  market: MarketSubscription;
  markets: MarketsSubscription;
  rest: RestSubscription;
} & { [C in DefinedChannel]: DefinedSubscription<C> };

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
  const stream = ((): AnyStreamSubscription => {
    switch (channel) {
      case 'book':
        return new BookSubscription(host, market, depth, group);
      case 'price':
        return new PriceSubscription(host, market);
      case 'market':
        return new MarketSubscription(host, market);
      case 'markets':
        return new MarketsSubscription(host, market);
      case 'rest':
        return new RestSubscription(host, market);
      default:
        // Every other channel has a folder of its own (channels/registry.ts); TypeScript cannot
        // narrow a generic C to DefinedChannel, hence the casts.
        return new DefinedSubscription(
          host,
          market,
          channel as DefinedChannel,
        ) as unknown as AnyStreamSubscription;
    }
  })();
  return stream as ReplayedStreamOf<C>;
}
