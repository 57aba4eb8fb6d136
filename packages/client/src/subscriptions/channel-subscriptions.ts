/**
 * @module client/subscriptions/channel-subscriptions
 * The stream of each channel as the application holds it: a channel with a folder of its own in
 * the wire package is one `DefinedSubscription`, its state and events as the channel's hold says
 * (channels/registry.ts); every other channel's class is in ./channels/<name>/. Here the SDK
 * knows them all by name (`ChannelSubscriptions`) and makes one of any channel
 * (`channelSubscription`). Sequencing, resync and status are the base class's
 * (./stream-subscription.ts).
 */

import {
  type DefinedChannel,
  type HeldEvents,
  type HeldState,
  type HeldStreamOf,
  holdStream,
  isDefinedChannel,
} from '../../../protocol/src/channels/registry.ts';
import type {
  BookDepth,
  Channel,
  DefinedSnapshotMessage,
  DefinedUpdateMessage,
} from '../../../protocol/src/protocol/messages.ts';
import { BookSubscription } from './channels/book/subscription.ts';
import { MarketSubscription } from './channels/market/subscription.ts';
import { MarketsSubscription } from './channels/markets/subscription.ts';
import { PriceSubscription } from './channels/price/subscription.ts';
import { RestSubscription } from './channels/rest/subscription.ts';
import { type StreamEvents, type StreamHost, StreamSubscription } from './stream-subscription.ts';

/** The events of a stream of a channel with a folder of its own: every stream's and the channel's. */
export type DefinedEvents<C extends DefinedChannel> = StreamEvents<
  HeldState<C>,
  DefinedSnapshotMessage<C>,
  DefinedUpdateMessage<C>
> &
  HeldEvents<C>;

/**
 * A stream of a channel with a folder of its own (channels/registry.ts): its state is the
 * snapshot's data, each update applied as the channel's definition says, unless the channel holds
 * its streams its own way (channels/<name>/subscription.ts: its own state and events).
 */
export class DefinedSubscription<C extends DefinedChannel> extends StreamSubscription<
  HeldState<C>,
  DefinedSnapshotMessage<C>,
  DefinedUpdateMessage<C>,
  DefinedEvents<C>
> {
  readonly channel: C;
  readonly depth = undefined;
  readonly #held: HeldStreamOf<C>;

  constructor(host: StreamHost, market: string, channel: C) {
    super(host, market);
    this.channel = channel;
    this.#held = holdStream(channel);
  }

  protected stateOf(snapshot: DefinedSnapshotMessage<C>): HeldState<C> {
    return this.#held.stateOf(snapshot.data);
  }

  protected apply(state: HeldState<C>, update: DefinedUpdateMessage<C>): HeldState<C> {
    return this.#held.apply(state, update.data);
  }

  protected override verify(
    state: HeldState<C>,
    message: DefinedSnapshotMessage<C> | DefinedUpdateMessage<C>,
  ): boolean {
    const { checksum } = this.#held;
    // A channel that declares a checksum carries one on every message (the frame checks saw to it).
    return checksum === undefined || checksum(state) === (message as { checksum?: unknown }).checksum;
  }

  protected override accepted(
    message: DefinedSnapshotMessage<C> | DefinedUpdateMessage<C>,
    state: HeldState<C>,
  ): void {
    // The channel's events are DefinedEvents<C>'s, which TypeScript does not see of a C not yet known.
    this.#held.accepted?.(message.data, state, (event, payload) =>
      this.emit(event, payload as unknown as DefinedEvents<C>[typeof event]),
    );
  }
}

/** The stream each channel's subscriptions are held in. */
export type ChannelSubscriptions = {
  book: BookSubscription;
  price: PriceSubscription;
  market: MarketSubscription;
  markets: MarketsSubscription;
  rest: RestSubscription;
} & { [C in DefinedChannel]: DefinedSubscription<C> };

export type AnyStreamSubscription = ChannelSubscriptions[Channel];

/** What makes a stream of a channel with a class of its own (a book's of `depth` and `group`). */
type Make = (
  host: StreamHost,
  market: string,
  depth: BookDepth,
  group: string | undefined,
) => AnyStreamSubscription;

const classOwners: Readonly<Record<Exclude<Channel, DefinedChannel>, Make>> = {
  book: (host, market, depth, group) => new BookSubscription(host, market, depth, group),
  price: (host, market) => new PriceSubscription(host, market),
  market: (host, market) => new MarketSubscription(host, market),
  markets: (host, market) => new MarketsSubscription(host, market),
  rest: (host, market) => new RestSubscription(host, market),
};

/** A new stream of `channel`'s `market` (a book's of `depth` and `group`) on `host`. */
export function channelSubscription<C extends Channel>(
  channel: C,
  market: string,
  host: StreamHost,
  depth: BookDepth,
  group: string | undefined,
): ChannelSubscriptions[C] {
  // TypeScript cannot narrow a generic C by the tests, hence the casts; the tables are typed per channel.
  const stream = isDefinedChannel(channel)
    ? new DefinedSubscription(host, market, channel)
    : classOwners[channel as Exclude<Channel, DefinedChannel>](host, market, depth, group);
  return stream as ChannelSubscriptions[C];
}
