/**
 * @module client/subscriptions/channel-subscriptions
 * The stream of each channel as the application holds it: its state type, how a snapshot and an
 * update make it (with the shared pure cores of src/protocol), and the events a channel adds
 * (docs/client.md "API"). Sequencing, resync and status are the base class's (./stream-subscription.ts).
 */

import { applyOrderMapUpdate, type OrderMapState, orderMapOf } from '../../channels/orders/orders.ts';
import { channelDefinitions, type DefinedChannel } from '../../channels/registry.ts';
import { RecentIds } from '../../channels/trades/recent-ids.ts';
import { applyTradesUpdate, TRADES_SEEN_IDS, TRADES_SNAPSHOT_SIZE } from '../../channels/trades/trades.ts';
import { applyBookUpdate, type BookState, bookChecksum } from '../../protocol/book.ts';
import { applyMarketsUpdate, applyMarketUpdate } from '../../protocol/channel-state.ts';
import type {
  BookDepth,
  BookSnapshotMessage,
  BookUpdateMessage,
  ChannelData,
  ChannelSnapshotMessage,
  ChannelUpdateMessage,
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
  TradeEntry,
} from '../../protocol/messages.ts';

import { applyPriceUpdate } from '../../protocol/price.ts';
import type { CandlesSubscription } from './candles-subscription.ts';
import type { RestSubscription } from './rest-subscription.ts';
import { type StreamEvents, type StreamHost, StreamSubscription } from './stream-subscription.ts';

export type AnyStreamSubscription =
  | BookSubscription
  | PriceSubscription
  | TradesSubscription
  | MarketSubscription
  | AnyDefinedSubscription
  | OrdersSubscription
  | MarketsSubscription
  | RestSubscription
  | CandlesSubscription;

/** A `book` stream: state is `{ bids, asks, last_price }` with exact decimal strings, best first. */
export class BookSubscription extends StreamSubscription<BookState, BookSnapshotMessage, BookUpdateMessage> {
  readonly channel = 'book';
  readonly depth: BookDepth;

  constructor(host: StreamHost, market: string, depth: BookDepth) {
    super(host, market);
    this.depth = depth;
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

  protected stateOf(snapshot: PriceSnapshotMessage): PriceData {
    return snapshot.data;
  }

  protected apply(state: PriceData, update: PriceUpdateMessage): PriceData {
    return applyPriceUpdate(state, update.data);
  }
}

type OrdersSnapshotMessage = ChannelSnapshotMessage<'orders'>;
type OrdersUpdateMessage = ChannelUpdateMessage<'orders'>;
type TradesSnapshotMessage = ChannelSnapshotMessage<'trades'>;
type TradesUpdateMessage = ChannelUpdateMessage<'trades'>;

/** The recent trades of a market, oldest first: at most as many as a snapshot carries. */
export type TradesState = readonly TradeEntry[];

export interface TradesEvents extends StreamEvents<TradesState, TradesSnapshotMessage, TradesUpdateMessage> {
  /** One trade, once: never again for the same `activity_id`, across resyncs, reconnects and epochs. */
  trade: TradeEntry;
}

/**
 * A `trades` stream. The relay sends each `activity_id` once per stream, but a new epoch (a relay
 * restart) starts with a snapshot of trades already delivered: the ids already announced are
 * remembered (the most recent TRADES_SEEN_IDS, enough for any snapshot) so that `trade` fires once
 * per trade for the subscription's whole life.
 */
export class TradesSubscription extends StreamSubscription<
  TradesState,
  TradesSnapshotMessage,
  TradesUpdateMessage,
  TradesEvents
> {
  readonly channel = 'trades';
  readonly depth = undefined;
  readonly #announced = new RecentIds(TRADES_SEEN_IDS);

  protected stateOf(snapshot: TradesSnapshotMessage): TradesState {
    return snapshot.data.trades.slice(-TRADES_SNAPSHOT_SIZE);
  }

  /**
   * The relay sends each id once per stream; an entry the state already holds is still skipped, so
   * that a relay breaking that promise cannot put a trade twice into the list.
   */
  protected apply(state: TradesState, update: TradesUpdateMessage): TradesState {
    const held = new Set(state.map((trade) => trade.activity_id));
    const fresh = update.data.trades.filter((trade) => !held.has(trade.activity_id));
    return fresh.length === 0 ? state : applyTradesUpdate({ trades: [...state] }, { trades: fresh }).trades;
  }

  protected override accepted(message: TradesSnapshotMessage | TradesUpdateMessage): void {
    for (const trade of message.data.trades)
      if (this.#announced.add(trade.activity_id)) this.emit('trade', trade);
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

/**
 * A stream of a channel with a folder of its own (src/channels/registry.ts): its state is the
 * snapshot's data, each update applied as the channel's definition says.
 */
export class DefinedSubscription<C extends DefinedChannel> extends StreamSubscription<
  ChannelData[C]['snapshot'],
  ChannelSnapshotMessage<C>,
  ChannelUpdateMessage<C>
> {
  readonly channel: C;
  readonly depth = undefined;

  constructor(host: StreamHost, market: string, channel: C) {
    super(host, market);
    this.channel = channel;
  }

  protected stateOf(snapshot: ChannelSnapshotMessage<C>): ChannelData[C]['snapshot'] {
    return snapshot.data;
  }

  protected apply(
    state: ChannelData[C]['snapshot'],
    update: ChannelUpdateMessage<C>,
  ): ChannelData[C]['snapshot'] {
    return channelDefinitions[this.channel].apply(state, update.data);
  }
}

type AnyDefinedSubscription = { [C in DefinedChannel]: DefinedSubscription<C> }[DefinedChannel];

/** An `orders` stream: each side's orders by id, as upstream's whole entries. */
export class OrdersSubscription extends StreamSubscription<
  OrderMapState,
  OrdersSnapshotMessage,
  OrdersUpdateMessage
> {
  readonly channel = 'orders';
  readonly depth = undefined;

  protected stateOf(snapshot: OrdersSnapshotMessage): OrderMapState {
    return orderMapOf(snapshot.data);
  }

  protected apply(state: OrderMapState, update: OrdersUpdateMessage): OrderMapState {
    return applyOrderMapUpdate(state, update.data);
  }
}

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
