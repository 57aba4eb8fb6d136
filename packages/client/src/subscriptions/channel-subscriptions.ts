/**
 * @module client/subscriptions/channel-subscriptions
 * The stream of each channel as the application holds it: its state type, how a snapshot and an
 * update make it (with the shared pure cores of protocol/, and for a channel with a folder of
 * its own the hold channels/ gives), and the events a channel adds (docs/client.md "API").
 * Sequencing, resync and status are the base class's (./stream-subscription.ts).
 */

import {
  type DefinedChannel,
  type HeldEvents,
  type HeldState,
  type HeldStreamOf,
  holdStream,
} from '../../../protocol/src/channels/registry.ts';
import { applyBookUpdate, type BookState, bookChecksum } from '../../../protocol/src/protocol/book.ts';
import { applyMarketsUpdate, applyMarketUpdate } from '../../../protocol/src/protocol/channel-state.ts';
import { groupExpected, offeredGroup } from '../../../protocol/src/protocol/group.ts';
import type {
  BookDepth,
  BookSnapshotMessage,
  BookUpdateMessage,
  DefinedSnapshotMessage,
  DefinedUpdateMessage,
  MarketData,
  MarketListRecord,
  MarketSnapshotMessage,
  MarketsData,
  MarketsSnapshotMessage,
  MarketsUpdateMessage,
  MarketUpdateMessage,
  PriceData,
  PriceSnapshotMessage,
  PriceUpdateMessage,
} from '../../../protocol/src/protocol/messages.ts';
import { bookDepths } from '../../../protocol/src/protocol/messages.ts';

import { applyPriceUpdate } from '../../../protocol/src/protocol/price.ts';
import { RelayClientError } from '../events/client-error.ts';
import { checkedInterval, checkedThreshold } from './options.ts';
import type { RestSubscription } from './rest-subscription.ts';
import {
  type StreamEvents,
  type StreamHost,
  type StreamOptions,
  StreamSubscription,
} from './stream-subscription.ts';

export type AnyStreamSubscription =
  | BookSubscription
  | PriceSubscription
  | MarketSubscription
  | AnyDefinedSubscription
  | MarketsSubscription
  | RestSubscription;

/**
 * The stream depth an application asks for: 1, 5, 10, 25 or 50 levels a side; `'full'`, null or
 * nothing is the full book (null on the wire). Any other depth throws a TypeError.
 */
export function streamDepth(asked: BookDepth | 'full' | undefined): BookDepth {
  const wanted: unknown = asked ?? null;
  if (wanted === null || wanted === 'full') return null;
  const depth = bookDepths.find((offered) => offered === wanted);
  if (depth === undefined)
    throw new TypeError(`depth must be ${bookDepths.join(', ')}, 'full' or null, got ${String(wanted)}`);
  return depth;
}

/**
 * The group step an application asks for (docs/protocol.md "Grouped books"): one of `bookGroups` in
 * any decimal spelling, read as the relay's; undefined is the book ungrouped. Any other throws a TypeError.
 */
export function streamGroup(asked: string | undefined): string | undefined {
  if (asked === undefined) return undefined;
  const group = offeredGroup(asked);
  if (group === undefined) throw new TypeError(`group: ${groupExpected}, got ${JSON.stringify(asked)}`);
  return group;
}

/**
 * A `book` stream: state is `{ bids, asks, last_price }` with exact decimal strings, best first;
 * with a `group`, the levels summed into multiples of that step (bids down, asks up).
 */
export class BookSubscription extends StreamSubscription<BookState, BookSnapshotMessage, BookUpdateMessage> {
  readonly channel = 'book';
  #depth: BookDepth;
  readonly #group: string | undefined;
  readonly #host: StreamHost;

  constructor(host: StreamHost, market: string, depth: BookDepth, group?: string) {
    super(host, market);
    this.#host = host;
    this.#depth = depth;
    this.#group = group;
  }

  get depth(): BookDepth {
    return this.#depth;
  }

  override get group(): string | undefined {
    return this.#group;
  }

  /**
   * Moves this stream to another depth at the relay, without unsubscribing (docs/client.md):
   * resolves on the relay's `subscribed`, rejects with its error; `depth` changes then, and the
   * state is rebuilt from the new depth's snapshot. A depth `subscribeBook` refuses throws a
   * `TypeError` here too, before anything is sent.
   */
  update(options: { depth: BookDepth | 'full' }): Promise<void> {
    const depth = streamDepth(options.depth);
    const from = { channel: 'book' as const, market: this.market, depth: this.#depth, group: this.#group };
    if (this.#host.changeDepth === undefined)
      return Promise.reject(new RelayClientError('bad_request', 'this stream cannot change its depth'));
    return this.#host.changeDepth(from, depth, () => {
      if (depth === this.#depth) return;
      this.#depth = depth;
      this.awaitSnapshot();
    });
  }

  protected stateOf(snapshot: BookSnapshotMessage): BookState {
    return snapshot.data;
  }

  protected apply(state: BookState, update: BookUpdateMessage): BookState {
    return applyBookUpdate(state, update.data);
  }

  protected override verify(state: BookState, message: BookSnapshotMessage | BookUpdateMessage): boolean {
    return bookChecksum(state) === message.checksum;
  }
}

/** A `price` stream: state is upstream's decimal strings per field; a field upstream omits is absent. */
export class PriceSubscription extends StreamSubscription<
  PriceData,
  PriceSnapshotMessage,
  PriceUpdateMessage
> {
  readonly channel = 'price';
  readonly depth = undefined;
  readonly #host: StreamHost;

  constructor(host: StreamHost, market: string) {
    super(host, market);
    this.#host = host;
  }

  /**
   * Changes this stream's `interval` and `threshold` at the relay in place (an `update`; docs/
   * client.md): null clears one, absent leaves it. Resolves on the relay's `subscribed`, rejects
   * with its error; a value the relay would refuse throws, as `subscribePrice` does.
   */
  update(options: StreamOptions): Promise<void> {
    const { interval, threshold } = options;
    const checked: StreamOptions = {
      ...(interval === undefined ? {} : { interval: interval === null ? null : checkedInterval(interval) }),
      ...(threshold === undefined
        ? {}
        : { threshold: threshold === null ? null : checkedThreshold(threshold) }),
    };
    if (this.#host.changeOptions === undefined)
      return Promise.reject(new RelayClientError('bad_request', 'this stream cannot change its options'));
    return this.#host.changeOptions(this, checked);
  }

  protected stateOf(snapshot: PriceSnapshotMessage): PriceData {
    return snapshot.data;
  }

  protected apply(state: PriceData, update: PriceUpdateMessage): PriceData {
    return applyPriceUpdate(state, update.data);
  }
}

/** upstream's status of a market that accepts trading (docs/upstream.md "Market status"). */
const ACTIVE = 'ACTIVE';

export interface MarketEvents extends StreamEvents<MarketData, MarketSnapshotMessage, MarketUpdateMessage> {
  /**
   * The market left ACTIVE (expired, resolved): `status` is its new upstream status. Fires once;
   * the relay then closes the stream (subscription status `closed`).
   */
  closed: { status: string; state: MarketData };
}

/** A `market` stream: state is upstream's market detail record, each field with upstream's type. */
export class MarketSubscription extends StreamSubscription<
  MarketData,
  MarketSnapshotMessage,
  MarketUpdateMessage,
  MarketEvents
> {
  readonly channel = 'market';
  readonly depth = undefined;
  #announcedClose = false;

  protected stateOf(snapshot: MarketSnapshotMessage): MarketData {
    return snapshot.data;
  }

  protected apply(state: MarketData, update: MarketUpdateMessage): MarketData {
    return applyMarketUpdate(state, update.data);
  }

  protected override accepted(
    _message: MarketSnapshotMessage | MarketUpdateMessage,
    state: MarketData,
  ): void {
    const status = state.status;
    if (this.#announcedClose || typeof status !== 'string' || status === ACTIVE) return;
    this.#announcedClose = true;
    this.emit('closed', { status, state });
  }
}

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

type AnyDefinedSubscription = { [C in DefinedChannel]: DefinedSubscription<C> }[DefinedChannel];

/**
 * A `markets` stream (`market` is the catalogue's filter: `all`, `active` ...): every market's
 * list-form record by id; `listed` fires for each market new to it and `delisted` for each that left.
 */
export class MarketsSubscription extends StreamSubscription<
  MarketsData,
  MarketsSnapshotMessage,
  MarketsUpdateMessage,
  StreamEvents<MarketsData, MarketsSnapshotMessage, MarketsUpdateMessage> & {
    listed: MarketListRecord;
    delisted: { market: string };
  }
> {
  readonly channel = 'markets';
  readonly depth = undefined;
  #previous: MarketsData | undefined;

  protected stateOf(snapshot: MarketsSnapshotMessage): MarketsData {
    return snapshot.data;
  }

  protected apply(state: MarketsData, update: MarketsUpdateMessage): MarketsData {
    this.#previous = state;
    return applyMarketsUpdate(state, update.data);
  }

  /** An update's new and removed markets, in the update's order; a snapshot announces none. */
  protected override accepted(message: MarketsSnapshotMessage | MarketsUpdateMessage): void {
    const before = this.#previous;
    this.#previous = undefined;
    if (message.type !== 'update' || before === undefined) return;
    for (const [market, record] of Object.entries(message.data)) {
      if (record === null) this.emit('delisted', { market });
      else if (!Object.hasOwn(before, market)) this.emit('listed', record);
    }
  }
}
