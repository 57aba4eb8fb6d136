/**
 * @module client/relay-client
 * The client the application holds: it owns the connection and the streams, routes each relay
 * message to its stream, resubscribes everything (with `resume`) on every open, and sends the
 * snapshot requests streams ask for when they lose continuity, batched per (channel, depth)
 * (client/subscriptions/subscribe-batch.ts); client/requests-in-flight.ts matches the relay's
 * answers to requests. It also asks the relay what it holds for this connection (`list`) and moves
 * a book stream to another depth in place (`update`).
 */

import {
  type CatalogueFilter,
  canonicalStreamId,
  isWildcardChannel,
  type WildcardChannel,
  wildcardChannels,
} from '../../protocol/src/protocol/channels.ts';
import type {
  BookDepth,
  Channel,
  MarketListRecord,
  StreamMessage,
  SubscriptionsMessage,
} from '../../protocol/src/protocol/messages.ts';
import { ChannelStreams } from './channel-streams.ts';
import type { ClientEvents, ClientOptions } from './client-options.ts';
import { defaultBackoff } from './connection/backoff.ts';
import { closeMeaning } from './connection/close-meaning.ts';
import { type ConnectionStatus, RelayConnection } from './connection/relay-connection.ts';
import type { SocketFactory } from './connection/socket.ts';
import { StreamNumbers } from './connection/stream-numbers.ts';
import { RelayClientError } from './events/client-error.ts';
import { rethrowLater } from './events/emitter.ts';
import { silentLogger } from './events/logger.ts';
import { type HistoryOptions, historyQuery, historyUrl, readHistory } from './history/export-reader.ts';
import type { Replay } from './history/replay.ts';
import { type ReplayOptions, Replays } from './history/replays.ts';
import { RelayMessages } from './relay-messages.ts';
import { RequestsInFlight, refusal } from './requests-in-flight.ts';
import { StreamUpdates } from './stream-updates.ts';
import type { AnyStreamSubscription } from './subscriptions/channel-subscriptions.ts';
import { firstState } from './subscriptions/first-state.ts';
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

export type { ClientEvents, ClientOptions } from './client-options.ts';

const DEFAULT_REPORT_UNREACHABLE_AFTER = 5;
const DEFAULT_HEARTBEAT_MS = 15_000;

export class RelayClient extends ChannelStreams {
  readonly #connection: RelayConnection;
  readonly #streams = new SubscriptionRegistry();
  readonly #host: StreamHost;
  readonly #toSubscribe: SubscribeBatch;
  readonly #inFlight = new RequestsInFlight();
  readonly #numbers = new StreamNumbers();
  readonly #wildcards: ClientWildcards;
  readonly #messages: RelayMessages;
  readonly #replays: Replays;
  /** Sent as `Authorization: Bearer` to the history export. */
  readonly #apiKey: string | undefined;
  #opened = false;
  /** Over SSE nothing reaches the relay but each response's query: `update` and `list` cannot. */
  readonly #carriesRequests: boolean;
  /** Aborted with the `unreachable` error until a connection opens: one-off questions stop waiting. */
  #unanswerable = new AbortController();

  constructor(
    urls: readonly string[],
    createSocket: SocketFactory,
    options: ClientOptions = {},
    transport: 'websocket' | 'sse' = 'websocket',
  ) {
    super();
    this.#carriesRequests = transport === 'websocket';
    this.#toSubscribe = new SubscribeBatch(
      () => this.#connection.status === 'open',
      (request) => this.#send(request),
    );
    const heartbeatMs = options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
    const send = (text: string) => this.#connection.send(text);
    const updates = new StreamUpdates({
      streams: this.#streams,
      inFlight: this.#inFlight,
      send,
      needsRequests: (call, instead) => this.#needsRequests(call, instead),
    });
    this.#replays = new Replays({
      send,
      isOpen: () => this.#connection.status === 'open',
      reportListenerError: (error) => this.#listenerThrew(error),
    });
    this.#apiKey = options.apiKey;
    this.#host = {
      requestSnapshot: ({ channel, market, depth, group }) => {
        const stream = this.#streams.get(channel, market, depth, group);
        if (stream !== undefined) this.#toSubscribe.add(stream);
      },
      release: ({ channel, market, depth, group }) => {
        const stream = this.#streams.get(channel, market, depth, group);
        if (stream !== undefined) this.#release(stream);
      },
      reportListenerError: (error) => this.#listenerThrew(error),
      logger: options.logger ?? silentLogger,
      changeDepth: (stream, depth, moved) => updates.changeDepth(stream, depth, moved),
      changeOptions: (stream, options) => updates.changeOptions(stream, options),
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
      replays: this.#replays,
      error: (error) => this.emit('error', error),
      goingAway: (reconnectInMs) => this.#connection.goingAway(reconnectInMs),
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

  /** The application's streams (not yet closed): the client's side of what `subscriptions()` asks. */
  get streams(): readonly AnyStreamSubscription[] {
    return this.#streams.all();
  }

  /**
   * Every market upstream's catalogue lists as active, now and later (docs/client.md "Every active
   * market"): each market's stream arrives through `added` and ends, through `removed`, when the
   * market is no longer active. Asking again for the same channel returns the same object. Another
   * channel throws a TypeError, as a bad id does.
   */
  subscribeAll<C extends WildcardChannel>(channel: C): WildcardSubscription<WildcardStreams[C]> {
    if (!isWildcardChannel(channel))
      throw new TypeError(`a wildcard takes ${wildcardChannels.join(', ')}, not ${JSON.stringify(channel)}`);
    const wildcard = this.#wildcards.subscribe(channel);
    // After close() nothing is subscribed again: it ends at once, as a stream would.
    if (this.#connection.status === 'closed') this.#wildcards.end('client closed');
    return wildcard;
  }

  /**
   * The catalogue's records now (its live subscription's state; it stays subscribed). Rejects with
   * the `unreachable` error when no relay has accepted a connection in `reportUnreachableAfter`
   * attempts (at once once that is so, until a connection opens).
   */
  async markets(filter: CatalogueFilter = {}): Promise<MarketListRecord[]> {
    return Object.values(await firstState(this.subscribeMarkets(filter), this.#unanswerable.signal));
  }

  /**
   * The relay's own list of this connection's streams, `"*"` subscriptions and limits
   * (docs/protocol.md "`list`"); `streams` is the client's side of the same. Rejects with the
   * relay's error, or `connection_failed` when the connection is not open or closes first.
   */
  subscriptions(): Promise<SubscriptionsMessage> {
    this.#needsRequests('subscriptions()', "`client.streams` is the client's own list");
    return new Promise((resolve, reject) =>
      this.#inFlight.ask(
        { op: 'list' },
        (text) => this.#connection.send(text),
        (answer) => (answer?.type === 'subscriptions' ? resolve(answer) : reject(refusal(answer))),
      ),
    );
  }

  /**
   * The recorded messages of `channel`'s streams of `markets` whose `rts` lies in [from, to), as
   * they were sent, paced at `speed` (docs/client.md "Replay"): an async iterator of items, each
   * message applied to its market's replayed stream (`item.state`: the state after it, verified as
   * live states are), `gap` items where the record has a hole, `resync` where its continuity
   * breaks; it ends at the relay's `replayed` (then `result`). Leaving the loop sends `replay_stop`.
   * A bad option throws a TypeError; a refusal or a lost connection throws from the loop.
   */
  replay<C extends Channel>(options: ReplayOptions<C>): Replay<C> {
    this.#needsRequests('replay()', 'Server-Sent Events carry no replay');
    return this.#replays.start(options);
  }

  /**
   * One stream's recorded messages from the relay's NDJSON export (docs/history.md "Export"),
   * read as they stream in, in order; on the HTTP origin of the relay in use.
   */
  history(options: HistoryOptions): AsyncGenerator<StreamMessage, void, undefined> {
    const url = historyUrl(this.#connection.url, historyQuery(options));
    const headers: Record<string, string> =
      this.#apiKey === undefined ? {} : { Authorization: `Bearer ${this.#apiKey}` };
    // Called as a plain function: browsers refuse a `fetch` called with another `this`.
    const fetchImpl = options.fetch ?? ((url, init) => globalThis.fetch(url, init));
    return readHistory(fetchImpl, url, headers, options.signal);
  }

  /** Closes the connection for good; every stream ends with status `closed`. */
  async close(): Promise<void> {
    this.#messages.stopRetries();
    this.#replays.end();
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
  protected override stream<S extends AnyStreamSubscription>(
    channel: Channel,
    anyCaseId: string,
    depth: BookDepth | undefined,
    kind: abstract new (...args: never[]) => S,
    create: (host: StreamHost, id: string) => S,
    group?: string,
  ): S {
    const checked = canonicalStreamId(channel, anyCaseId);
    if (!checked.ok) throw new TypeError(`${channel}: ${JSON.stringify(anyCaseId)} is ${checked.message}`);
    const existing = this.#streams.get(channel, checked.id, depth, group);
    if (existing instanceof kind) return existing;
    return this.#add(create(this.#host, checked.id));
  }

  /**
   * A new pace or threshold is asked with a repeated `subscribe`, which the relay answers with a
   * fresh snapshot.
   */
  protected override pace<S extends AnyStreamSubscription>(
    stream: S,
    interval: number | undefined,
    threshold?: string,
  ): S {
    const pace = interval !== undefined && stream.interval !== interval;
    const gate = threshold !== undefined && stream.threshold !== threshold;
    if ((!pace && !gate) || stream.isClosed) return stream;
    if (pace) stream.interval = interval;
    if (gate) stream.threshold = threshold;
    this.#toSubscribe.add(stream);
    return stream;
  }

  /** The history is asked with a (repeated) `subscribe`, answered with a snapshot holding it. */
  protected override withSince<S extends AnyStreamSubscription>(stream: S, since: string | undefined): S {
    if (since === undefined || stream.isClosed) return stream;
    stream.since = since;
    this.#toSubscribe.add(stream);
    return stream;
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

  /**
   * A request the transport cannot carry is a programming error, thrown at the call as a bad value
   * is (docs/client.md "Without WebSocket"), rather than answered later by a refusal.
   */
  #needsRequests(call: string, instead: string): void {
    if (!this.#carriesRequests)
      throw new TypeError(`${call} needs a WebSocket: Server-Sent Events carry no requests (${instead})`);
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
    this.#replays.opened();
    this.emit('open', { reconnect: this.#opened, url });
    this.#opened = true;
  }

  #onClose(event: ClientEvents['close']): void {
    this.#inFlight.clear();
    this.#replays.closed(
      new RelayClientError('connection_failed', `the connection closed during the replay (${event.code})`),
    );
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
