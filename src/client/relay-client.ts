/**
 * @module client/relay-client
 * The client the application holds: it owns the connection and the streams, routes each relay
 * message to its stream, resubscribes everything (with `resume`) on every open, and sends the
 * snapshot requests streams ask for when they lose continuity, batched per (channel, depth)
 * (client/subscriptions/subscribe-batch.ts); client/requests-in-flight.ts matches the relay's
 * answers to requests.
 */

import { type CandleInterval, type CandleSource, candlesStreamId } from '../channels/candles/streams.ts';
import { PROBABILITIES_STREAM } from '../channels/probabilities/probabilities.ts';
import type { DefinedChannel } from '../channels/registry.ts';
import {
  type CatalogueFilter,
  canonicalStreamId,
  catalogueStreamId,
  type WildcardChannel,
} from '../protocol/channels.ts';
import type {
  BookDepth,
  Channel,
  ChannelSnapshotMessage,
  ChannelUpdateMessage,
  MarketListRecord,
} from '../protocol/messages.ts';
import type { ClientEvents, ClientOptions } from './client-options.ts';
import { defaultBackoff } from './connection/backoff.ts';
import { closeMeaning } from './connection/close-meaning.ts';
import { type ConnectionStatus, RelayConnection } from './connection/relay-connection.ts';
import type { SocketFactory } from './connection/socket.ts';
import { StreamNumbers } from './connection/stream-numbers.ts';
import { RelayClientError } from './events/client-error.ts';
import { Emitter, rethrowLater } from './events/emitter.ts';
import { RelayMessages } from './relay-messages.ts';
import { RequestsInFlight } from './requests-in-flight.ts';
import { CandlesSubscription } from './subscriptions/candles-subscription.ts';
import {
  type AnyStreamSubscription,
  BookSubscription,
  type DefinedEvents,
  DefinedSubscription,
  MarketSubscription,
  MarketsSubscription,
  PriceSubscription,
} from './subscriptions/channel-subscriptions.ts';
import { firstState } from './subscriptions/first-state.ts';
import { RestSubscription } from './subscriptions/rest-subscription.ts';
import type { StreamHost } from './subscriptions/stream-subscription.ts';
import { SubscribeBatch } from './subscriptions/subscribe-batch.ts';
import {
  type SubscribeBody,
  SubscriptionRegistry,
  subscribeRequests,
  type UnsubscribeBody,
  unsubscribeRequest,
} from './subscriptions/subscriptions.ts';
import {
  ClientWildcards,
  type WildcardStreams,
  type WildcardSubscription,
  wildcardStream,
} from './subscriptions/wildcard-subscription.ts';

// The SDK's name for each channel's stream, data, messages and events (the channels with a folder
// of their own share one implementation, DefinedSubscription).
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
} from '../channels/registry.ts';
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

export type { ClientEvents, ClientOptions } from './client-options.ts';
export type * from './subscriptions/candles-subscription.ts';

const DEFAULT_REPORT_UNREACHABLE_AFTER = 5;
const DEFAULT_HEARTBEAT_MS = 15_000;

export class RelayClient extends Emitter<ClientEvents> {
  readonly #connection: RelayConnection;
  readonly #streams = new SubscriptionRegistry();
  readonly #host: StreamHost;
  readonly #toSubscribe: SubscribeBatch;
  readonly #inFlight = new RequestsInFlight();
  readonly #numbers = new StreamNumbers();
  readonly #wildcards: ClientWildcards;
  readonly #messages: RelayMessages;
  #opened = false;
  /** Aborted with the `unreachable` error until a connection opens: one-off questions stop waiting. */
  #unanswerable = new AbortController();

  constructor(urls: readonly string[], createSocket: SocketFactory, options: ClientOptions = {}) {
    super();
    this.#toSubscribe = new SubscribeBatch(
      () => this.#connection.status === 'open',
      (request) => this.#send(request),
    );
    const heartbeatMs = options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
    this.#host = {
      requestSnapshot: ({ channel, market, depth }) => {
        const stream = this.#streams.get(channel, market, depth);
        if (stream !== undefined) this.#toSubscribe.add(stream);
      },
      release: ({ channel, market, depth }) => {
        const stream = this.#streams.get(channel, market, depth);
        if (stream !== undefined) this.#release(stream);
      },
      reportListenerError: (error) => this.#listenerThrew(error),
    };
    this.#wildcards = new ClientWildcards({
      adopt: (channel, market) => {
        // Over SSE a wildcard's response may announce a market the client also holds by name.
        if (this.#streams.get(channel, market, undefined) !== undefined) return undefined;
        const stream = wildcardStream(channel, this.#host, market);
        this.#streams.add(stream);
        return stream;
      },
      drop: (stream) => this.#streams.delete(stream),
      send: (request) => this.#send(request),
      isOpen: () => this.#connection.status === 'open',
      reportListenerError: (error) => this.#listenerThrew(error),
    });
    this.#messages = new RelayMessages({
      streams: this.#streams,
      inFlight: this.#inFlight,
      numbers: this.#numbers,
      wildcards: this.#wildcards,
      toSubscribe: this.#toSubscribe,
      error: (error) => this.emit('error', error),
    });
    this.#connection = new RelayConnection(
      {
        urls,
        createSocket,
        backoff: { ...defaultBackoff, ...options.backoff },
        random: options.random ?? Math.random,
        deadAfterMs: options.deadAfterMs ?? heartbeatMs * 2.5,
        reportUnreachableAfter: options.reportUnreachableAfter ?? DEFAULT_REPORT_UNREACHABLE_AFTER,
      },
      {
        status: (status) => this.emit('status', { status }),
        open: (url) => this.#onOpen(url),
        message: (data) => this.#messages.receive(data),
        close: (event) => this.#onClose({ ...event, meaning: closeMeaning(event.code) }),
        reconnecting: (event) => this.emit('reconnecting', event),
        error: (error) => {
          if (error.code === 'unreachable') this.#unanswerable.abort(error);
          this.emit('error', error);
        },
      },
    );
    this.#connection.start();
  }

  get status(): ConnectionStatus {
    return this.#connection.status;
  }

  /** The socket URL of the relay in use, or being tried (one of several, tried in turn). */
  get url(): string {
    return this.#connection.url;
  }

  /** The application's streams (not yet closed). */
  get subscriptions(): readonly AnyStreamSubscription[] {
    return this.#streams.all();
  }

  /** Subscribes a book stream; asking again for the same (market, depth) returns the same object. */
  subscribeBook(market: string, options: { depth?: BookDepth } = {}): BookSubscription {
    const depth = options.depth ?? null;
    if (depth !== null && depth !== 10 && depth !== 50)
      throw new TypeError(`depth must be 10, 50 or null, got ${depth}`);
    return this.#subscribe(
      'book',
      market,
      depth,
      BookSubscription,
      (host, id) => new BookSubscription(host, id, depth),
    );
  }

  /** Subscribes a price stream; asking again for the same market returns the same object. */
  subscribePrice(market: string): PriceSubscription {
    return this.#plain('price', market, PriceSubscription);
  }

  /** A market's trades: the recent ones as `state`, each new one once as a `trade` event. */
  subscribeTrades(market: string): TradesSubscription {
    return this.#defined('trades', market);
  }

  /** A market's detail record; `closed` fires when the market leaves ACTIVE. */
  subscribeMarket(market: string): MarketSubscription {
    return this.#plain('market', market, MarketSubscription);
  }

  /**
   * Every market upstream's catalogue lists as active, now and later (docs/client.md "Every active
   * market"): each market's stream arrives through `added` and ends, through `removed`, when the
   * market is no longer active. Asking again for the same channel returns the same object.
   */
  subscribeAll<C extends WildcardChannel>(channel: C): WildcardSubscription<WildcardStreams[C]> {
    const wildcard = this.#wildcards.subscribe(channel);
    // After close() nothing is subscribed again: it ends at once, as a stream would.
    if (this.#connection.status === 'closed') this.#wildcards.end('client closed');
    return wildcard;
  }

  /** Every market's probability entry in one map (the channel's one stream, `all`). */
  subscribeProbabilities(): ProbabilitiesSubscription {
    return this.#defined('probabilities', PROBABILITIES_STREAM);
  }

  /** An oracle feed's latest price (`feedId` as a market's `oracle_feed_id`: `0x` + hex). */
  subscribeOracle(feedId: string): OracleSubscription {
    return this.#defined('oracle', feedId);
  }

  /** A market's orders by id per side, from the same polls as its book. */
  subscribeOrders(market: string): OrdersSubscription {
    return this.#defined('orders', market);
  }

  /**
   * The market catalogue, live (docs/client.md "The market catalogue"): every market's list-form
   * record by id; `filter` as upstream's list has them: a status (default every market) and a token.
   */
  subscribeMarkets(filter: CatalogueFilter = {}): MarketsSubscription {
    return this.#plain('markets', catalogueStreamId(filter), MarketsSubscription);
  }

  /**
   * Any public GET path of upstream, live (docs/client.md "Any public path"): `state` is the body
   * as upstream served it, kept by applying the relay's JSON Patches. Equivalent spellings of a
   * path give the same object; a path that is not public throws, as a bad market id does.
   */
  subscribeRest(path: string): RestSubscription {
    return this.#plain('rest', path, RestSubscription);
  }

  /**
   * A market's candles of one interval (`1m`, `5m`, `1h`, `1d`) from one source (`probability`,
   * `trades`), live (docs/client.md "Candles"): the most recent ones as `state`, oldest first, the
   * open one kept current and `final` fired for each one that closes.
   */
  subscribeCandles(
    market: string,
    options: { interval: CandleInterval; source: CandleSource },
  ): CandlesSubscription {
    const id = candlesStreamId({ market, ...options });
    return this.#plain('candles', id, CandlesSubscription);
  }

  /**
   * The catalogue's records now (its live subscription's state; it stays subscribed). Rejects with
   * the `unreachable` error when no relay has accepted a connection in `reportUnreachableAfter`
   * attempts (at once once that is so, until a connection opens).
   */
  async markets(filter: CatalogueFilter = {}): Promise<MarketListRecord[]> {
    return Object.values(await firstState(this.subscribeMarkets(filter), this.#unanswerable.signal));
  }

  /** Closes the connection for good; every stream ends with status `closed`. */
  async close(): Promise<void> {
    this.#messages.stopRetries();
    this.#wildcards.end('client closed');
    for (const stream of this.#streams.all()) {
      this.#streams.delete(stream);
      stream.end('client closed');
    }
    await this.#connection.close();
  }

  // --- Streams -----------------------------------------------------------------------------------

  /**
   * The stream of (channel, id[, depth]): the one already held, or a new one. An id the relay would
   * refuse (protocol.md: markets are UUIDs ...) is a programming error, thrown here so that it
   * cannot spoil the batched request it would share with other streams.
   */
  #subscribe<S extends AnyStreamSubscription>(
    channel: Channel,
    anyCaseId: string,
    depth: BookDepth | undefined,
    kind: abstract new (...args: never[]) => S,
    create: (host: StreamHost, id: string) => S,
  ): S {
    const checked = canonicalStreamId(channel, anyCaseId);
    if (!checked.ok) throw new TypeError(`${channel}: ${JSON.stringify(anyCaseId)} is ${checked.message}`);
    const existing = this.#streams.get(channel, checked.id, depth);
    if (existing instanceof kind) return existing;
    return this.#add(create(this.#host, checked.id));
  }

  /** A stream of a channel whose subscriptions are made from (host, id) alone. */
  #plain<S extends AnyStreamSubscription>(
    channel: Channel,
    id: string,
    Kind: new (host: StreamHost, id: string) => S,
  ): S {
    return this.#subscribe(channel, id, undefined, Kind, (host, checked) => new Kind(host, checked));
  }

  /** A stream of a channel with a folder of its own (src/channels/registry.ts). */
  #defined<C extends DefinedChannel>(channel: C, id: string): DefinedSubscription<C> {
    // For each channel C, DefinedSubscription<C> is one member of AnyStreamSubscription; TypeScript
    // does not see that of a C not yet known, hence the casts.
    const kind = DefinedSubscription as abstract new (...args: never[]) => AnyStreamSubscription;
    const stream = this.#subscribe(
      channel,
      id,
      undefined,
      kind,
      (host, checked) => new DefinedSubscription(host, checked, channel) as unknown as AnyStreamSubscription,
    );
    return stream as unknown as DefinedSubscription<C>;
  }

  #add<S extends AnyStreamSubscription>(stream: S): S {
    if (this.#connection.status === 'closed') {
      stream.end('client closed');
      return stream;
    }
    this.#streams.add(stream);
    this.#toSubscribe.add(stream);
    return stream;
  }

  #release(stream: AnyStreamSubscription): void {
    this.#wildcards.forget(stream);
    this.#streams.delete(stream);
    this.#toSubscribe.delete(stream);
    this.#send(unsubscribeRequest(stream));
  }

  // --- RelayConnection ---------------------------------------------------------------------------

  #onOpen(url: string): void {
    if (this.#unanswerable.signal.aborted) this.#unanswerable = new AbortController();
    this.#toSubscribe.clear();
    this.#inFlight.clear();
    this.#numbers.clear();
    // The streams a wildcard holds come back through its own subscribe.
    const named = this.#streams.all().filter((stream) => !this.#wildcards.owns(stream));
    for (const request of [...subscribeRequests(named, true), ...this.#wildcards.requests()])
      this.#send(request);
    this.emit('open', { reconnect: this.#opened, url });
    this.#opened = true;
  }

  #onClose(event: ClientEvents['close']): void {
    this.#inFlight.clear();
    const ended = !event.willReconnect && this.#connection.status === 'closed';
    if (ended) this.#wildcards.end('connection closed');
    for (const stream of this.#streams.all()) {
      if (event.willReconnect) stream.connectionLost();
      else if (ended) {
        this.#streams.delete(stream);
        stream.end(event.reason || `connection closed (${event.code}): ${event.meaning}`);
      }
    }
    this.emit('close', event);
  }

  #send(body: SubscribeBody | UnsubscribeBody): void {
    this.#inFlight.send(body, (text) => this.#connection.send(text));
  }

  /** A throwing `error` listener cannot be reported through `error` again: it goes to the host. */
  protected override onListenerError(error: unknown, event: keyof ClientEvents): void {
    if (event === 'error') rethrowLater(error);
    else this.#listenerThrew(error);
  }

  #listenerThrew(cause: unknown): void {
    this.emit('error', new RelayClientError('listener_threw', 'an event listener threw', { cause }));
  }
}
