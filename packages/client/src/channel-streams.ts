/**
 * @module client/channel-streams
 * What an application can subscribe to: one `subscribe…` method per channel, with the SDK's name for
 * each channel's stream, data, messages and events. The channels with a folder of their own
 * (channels/) share one implementation, DefinedSubscription; `candles` adds the parts its
 * stream id names. The client (./relay-client.ts) decides what holding a stream means: this class
 * asks it through `stream`.
 */
import { type CandleInterval, candlesStreamId } from '../../protocol/src/channels/candles/streams.ts';
import { PROBABILITIES_STREAM } from '../../protocol/src/channels/probabilities/probabilities.ts';
import {
  type CandleSource,
  candlesStreamOf,
  type DefinedChannel,
} from '../../protocol/src/channels/registry.ts';
import { type CatalogueFilter, catalogueStreamId } from '../../protocol/src/protocol/channels.ts';
import type {
  BookDepth,
  Channel,
  ChannelSnapshotMessage,
  ChannelUpdateMessage,
  DefinedSnapshotMessage,
  DefinedUpdateMessage,
} from '../../protocol/src/protocol/messages.ts';
import type { ClientEvents } from './client-options.ts';
import { Emitter } from './events/emitter.ts';
import {
  type AnyStreamSubscription,
  type DefinedEvents,
  DefinedSubscription,
} from './subscriptions/channel-subscriptions.ts';
import { BookSubscription, streamDepth, streamGroup } from './subscriptions/channels/book/subscription.ts';
import { MarketSubscription } from './subscriptions/channels/market/subscription.ts';
import { MarketsSubscription } from './subscriptions/channels/markets/subscription.ts';
import { PriceSubscription } from './subscriptions/channels/price/subscription.ts';
import { RestSubscription } from './subscriptions/channels/rest/subscription.ts';
import { checkedInterval, checkedSince, checkedThreshold } from './subscriptions/options.ts';
import type { StreamHost } from './subscriptions/stream-subscription.ts';

export type {
  OracleData,
  OrderEntry,
  OrderMapState,
  OrderSide,
  OrdersData,
  OrdersUpdateData,
  ProbabilitiesData,
  ProbabilitiesUpdateData,
  ProbabilityEntry,
  TradeEntry,
  TradesData,
  TradesState,
} from '../../protocol/src/channels/registry.ts';
export type OracleSubscription = DefinedSubscription<'oracle'>;
export type OracleSnapshotMessage = ChannelSnapshotMessage<'oracle'>;
export type OracleUpdateMessage = ChannelUpdateMessage<'oracle'>;
export type OrdersSubscription = DefinedSubscription<'orders'>;
export type OrdersSnapshotMessage = ChannelSnapshotMessage<'orders'>;
export type OrdersUpdateMessage = ChannelUpdateMessage<'orders'>;
export type TradesSubscription = DefinedSubscription<'trades'>;
export type TradesEvents = DefinedEvents<'trades'>;
export type TradesSnapshotMessage = ChannelSnapshotMessage<'trades'>;
export type TradesUpdateMessage = ChannelUpdateMessage<'trades'>;
export type ProbabilitiesSubscription = DefinedSubscription<'probabilities'>;
export type ProbabilitiesSnapshotMessage = ChannelSnapshotMessage<'probabilities'>;
export type ProbabilitiesUpdateMessage = ChannelUpdateMessage<'probabilities'>;

export type { CandlesState } from '../../protocol/src/channels/registry.ts';
export type CandlesEvents = DefinedEvents<'candles'>;
export type CandlesSnapshotMessage = DefinedSnapshotMessage<'candles'>;
export type CandlesUpdateMessage = DefinedUpdateMessage<'candles'>;

/** A `candles` stream, held as the channel says, with the market, interval and source its id names. */
export class CandlesSubscription extends DefinedSubscription<'candles'> {
  constructor(host: StreamHost, market: string) {
    super(host, market, 'candles');
  }

  /** The market, interval and source the stream id names. */
  get candles(): { market: string; interval: CandleInterval; source: CandleSource } {
    // The relay client only subscribes ids canonicalStreamId accepted.
    const stream = candlesStreamOf(this.market);
    if (stream === undefined) throw new TypeError(`not a candles stream: ${this.market}`);
    return stream;
  }
}

/**
 * A subscription's pace (docs/protocol.md "Per-subscription options"): at most one message per
 * `interval` ms (100 to 60,000), each a snapshot of the latest state; absent: every change. Given
 * for a stream already held, it changes that stream's pace (the relay sends a fresh snapshot).
 */
export interface PaceOption {
  interval?: number;
}

/**
 * A `price` subscription's options: its pace, and `threshold`, a decimal string of price units
 * (above 0, at most "1", at most 8 places): a message only when best bid, best ask or midpoint
 * moved by that much since the last one, each a snapshot; the latest state still arrives once the
 * market has been still for the interval, else 1 s (docs/protocol.md "Per-subscription options").
 */
export interface PriceOptions extends PaceOption {
  threshold?: string;
}

/**
 * Every channel (docs/protocol.md "History and replay"): the state as it stood at this ISO 8601 time
 * (or Date), then every recorded message after it, then live, with no gap and no duplicate; the
 * stream's `history` then says where the answer starts and whether it reaches back as far as asked.
 * `trades` also takes an `activity_id`; `candles` the range to start with. Given for a stream already
 * held, it is asked again.
 */
export interface SinceOption {
  since?: string | Date;
}

/** A subscription's pace and where its history starts. */
export type StreamOptionsIn = PaceOption & SinceOption;

export abstract class ChannelStreams extends Emitter<ClientEvents> {
  /**
   * The stream of (channel, id[, depth]): the one already held, or a new one made by `create`.
   * An id the relay would refuse throws.
   */
  protected abstract stream<S extends AnyStreamSubscription>(
    channel: Channel,
    anyCaseId: string,
    depth: BookDepth | undefined,
    kind: abstract new (...args: never[]) => S,
    create: (host: StreamHost, id: string) => S,
    group?: string,
  ): S;

  /** Sets a held stream's pace and threshold (checked; undefined leaves each as it is). */
  protected abstract pace<S extends AnyStreamSubscription>(
    stream: S,
    interval: number | undefined,
    threshold?: string,
  ): S;

  /** Asks a stream's history since a time (a checked `since`; undefined leaves it as it is). */
  protected abstract withSince<S extends AnyStreamSubscription>(stream: S, since: string | undefined): S;

  /**
   * Subscribes a book stream; asking again for the same (market, depth, group) returns the same object.
   * `'full'`, null and no depth are one stream, the full book (its `depth` is null, as on the wire).
   * `group` (one of `bookGroups`, such as `'0.05'`): the levels summed into multiples of that step
   * (docs/client.md "Grouped books"); a step the relay does not offer throws a TypeError.
   */
  subscribeBook(
    market: string,
    options: { depth?: BookDepth | 'full'; group?: string } & StreamOptionsIn = {},
  ): BookSubscription {
    const depth = streamDepth(options.depth);
    const group = streamGroup(options.group);
    const interval = checkedInterval(options.interval);
    const since = checkedSince('book', market, options.since);
    const stream = this.stream(
      'book',
      market,
      depth,
      BookSubscription,
      (host, id) => new BookSubscription(host, id, depth, group),
      group,
    );
    return this.withSince(this.pace(stream, interval), since);
  }

  /**
   * Subscribes a price stream; asking again for the same market returns the same object (with new
   * options, changed at the relay: a fresh snapshot follows).
   */
  subscribePrice(market: string, options: PriceOptions & SinceOption = {}): PriceSubscription {
    const threshold = checkedThreshold(options.threshold);
    return this.pace(this.#plain('price', market, PriceSubscription, options), undefined, threshold);
  }

  /**
   * A market's trades: the recent ones as `state`, each new one once as a `trade` event. No
   * `interval`: each trade is an event, and conflating would drop those beyond the kept window.
   * `since` (docs/protocol.md "History since a time"): every trade since that time (at most 24
   * hours back) or after that `activity_id` comes first, each as a `trade` event, then the live
   * ones; given for a stream already held, it is asked again.
   */
  subscribeTrades(market: string, options: SinceOption = {}): TradesSubscription {
    return this.#defined('trades', market, options);
  }

  /** A market's detail record; `closed` fires when the market leaves ACTIVE. */
  subscribeMarket(market: string, options: StreamOptionsIn = {}): MarketSubscription {
    return this.#plain('market', market, MarketSubscription, options);
  }

  /** Every market's probability entry in one map (the channel's one stream, `all`). */
  subscribeProbabilities(options: StreamOptionsIn = {}): ProbabilitiesSubscription {
    return this.#defined('probabilities', PROBABILITIES_STREAM, options);
  }

  /** An oracle feed's latest price (`feedId` as a market's `oracle_feed_id`: `0x` + hex). */
  subscribeOracle(feedId: string, options: StreamOptionsIn = {}): OracleSubscription {
    return this.#defined('oracle', feedId, options);
  }

  /** A market's orders by id per side, from the same polls as its book. */
  subscribeOrders(market: string, options: StreamOptionsIn = {}): OrdersSubscription {
    return this.#defined('orders', market, options);
  }

  /**
   * The market catalogue, live (docs/client.md "The market catalogue"): every market's list-form
   * record by id; `filter` as upstream's list has them: a status (default every market) and a token.
   */
  subscribeMarkets(filter: CatalogueFilter = {}, options: StreamOptionsIn = {}): MarketsSubscription {
    return this.#plain('markets', catalogueStreamId(filter), MarketsSubscription, options);
  }

  /**
   * Any public GET path of upstream, live (docs/client.md "Any public path"): `state` is the body
   * as upstream served it, kept by applying the relay's JSON Patches. Equivalent spellings of a
   * path give the same object; a path that is not public throws, as a bad market id does.
   */
  subscribeRest(path: string, options: StreamOptionsIn = {}): RestSubscription {
    return this.#plain('rest', path, RestSubscription, options);
  }

  /**
   * A market's candles of one interval (`1m`, `5m`, `1h`, `1d`) from one source (`probability`,
   * `trades`), live (docs/client.md "Candles"): the most recent ones as `state`, oldest first, the
   * open one kept current and `final` fired for each one that closes. `pace.interval` is the
   * subscription's pace in ms (`options.interval` being the candles' own). `options.since` (source
   * `trades`; docs/protocol.md "History since a time"): the first snapshot also brings the final
   * candles of the range since then older than its own, as one `history` event, oldest first.
   */
  subscribeCandles(
    market: string,
    options: { interval: CandleInterval; source: CandleSource } & SinceOption,
    pace: PaceOption = {},
  ): CandlesSubscription {
    const id = candlesStreamId({ market, interval: options.interval, source: options.source });
    return this.#plain('candles', id, CandlesSubscription, { ...pace, since: options.since });
  }

  /** A stream of a channel whose subscriptions are made from (host, id) alone. */
  #plain<S extends AnyStreamSubscription>(
    channel: Channel,
    id: string,
    Kind: new (host: StreamHost, id: string) => S,
    options: StreamOptionsIn,
  ): S {
    const interval = checkedInterval(options.interval);
    const since = checkedSince(channel, id, options.since);
    const stream = this.stream(channel, id, undefined, Kind, (host, checked) => new Kind(host, checked));
    return this.withSince(this.pace(stream, interval), since);
  }

  /** A stream of a channel with a folder of its own (channels/registry.ts). */
  #defined<C extends DefinedChannel>(
    channel: C,
    id: string,
    options: StreamOptionsIn = {},
  ): DefinedSubscription<C> {
    const interval = checkedInterval(options.interval);
    const since = checkedSince(channel, id, options.since);
    // For each channel C, DefinedSubscription<C> is one member of AnyStreamSubscription; TypeScript
    // does not see that of a C not yet known, hence the casts.
    const kind = DefinedSubscription as abstract new (...args: never[]) => AnyStreamSubscription;
    const stream = this.stream(
      channel,
      id,
      undefined,
      kind,
      (host, checked) => new DefinedSubscription(host, checked, channel) as unknown as AnyStreamSubscription,
    );
    return this.withSince(this.pace(stream, interval), since) as unknown as DefinedSubscription<C>;
  }
}
