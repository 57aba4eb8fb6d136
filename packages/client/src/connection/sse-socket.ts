/**
 * @module client/connection/sse-socket
 * The WebSocket the SDK expects, made of Server-Sent Events responses (protocol.md "Server-Sent
 * Events"), for where a WebSocket cannot be opened. SSE takes its subscription from the URL: one
 * channel and one value of each option (`depth`, `interval`, `threshold`, `since`: sse-query.ts)
 * per response, so each `subscribe` / `unsubscribe` the SDK sends reopens the response of that
 * selection with the new market list, resuming every stream it already had through the positions
 * of the last event id (no gap, no snapshot), and is answered here with the `subscribed` /
 * `unsubscribed` reply the SDK matches by `id`. A stream subscribed again with other options moves
 * to the response of those. `ping` is answered here too. A response that fails or ends closes the
 * whole socket (code 1006): the SDK then reconnects and resubscribes with its resume points, which
 * become the new `Last-Event-ID`. Requests SSE cannot carry (`update`, `list`) the SDK refuses at
 * the call (relay-client.ts); one sent anyway is answered here with a `bad_request`.
 *
 * A `"*"` response cannot leave out one of its markets (its query is the wildcard): unsubscribing
 * one of them by name (the SDK's `stream.unsubscribe()`) answers here and drops that market's
 * messages from the response until the relay announces it left the active list.
 */

import { PATHS_FIELD, STREAM_IDS_FIELD } from '../../../protocol/src/channels/definition.ts';
import { idsArePaths } from '../../../protocol/src/channels/registry.ts';
import { isWildcard, offTheWire } from '../../../protocol/src/protocol/channels.ts';
import type {
  ClientRequest,
  SubscribeRequest,
  UnsubscribeRequest,
} from '../../../protocol/src/protocol/messages.ts';
import { readEventStream } from './event-stream.ts';
import {
  type CloseEventLike,
  type ErrorEventLike,
  type MessageEventLike,
  OPEN,
  type WebSocketLike,
} from './socket.ts';
import { optionsOf, type QueryOptions, queryEntries, streamOptionsKey } from './sse-query.ts';

const CONNECTING = 0;
const CLOSED = 3;
const ABNORMAL_CLOSURE = 1006;

export type FetchLike = (
  url: string,
  init: { headers: Record<string, string>; signal: AbortSignal },
) => Promise<{ status: number; body: ReadableStream<Uint8Array> | null }>;

/** One open response: a channel and its options, its markets in URL order, each one's last position. */
interface Group {
  key: string;
  channel: string;
  options: QueryOptions;
  markets: string[];
  /** Market -> `<epoch>.<seq base 36>` from the last event id. */
  positions: Map<string, string>;
  abort: AbortController | undefined;
  /** The request whose reply the next `subscribed` of this response answers. */
  pending: SubscribeRequest | undefined;
  /** A `"*"` response: the markets it announced it holds. */
  announced: Set<string>;
  /** A `"*"` response: markets unsubscribed by name, whose messages are dropped until they leave. */
  dropped: Set<string>;
}

export class SseSocket implements WebSocketLike {
  readyState = CONNECTING;
  onopen: ((event: never) => void) | null = null;
  onmessage: ((event: MessageEventLike) => void) | null = null;
  onclose: ((event: CloseEventLike) => void) | null = null;
  onerror: ((event: ErrorEventLike) => void) | null = null;
  readonly #base: URL;
  readonly #headers: Record<string, string>;
  readonly #fetch: FetchLike;
  readonly #groups = new Map<string, Group>();
  /** Numbers the responses opened for a history (`since`), each its own. */
  #sinceResponses = 0;

  /** `url`: the relay's `/v1/sse` URL (with `?token=` where headers cannot carry the key). */
  constructor(url: string, fetchImpl: FetchLike, headers: Record<string, string> = {}) {
    this.#base = new URL(url);
    this.#fetch = fetchImpl;
    this.#headers = { accept: 'text/event-stream', ...headers };
    // Nothing to connect until a subscribe: open at once, as a WebSocket would after its handshake.
    queueMicrotask(() => {
      if (this.readyState !== CONNECTING) return;
      this.readyState = OPEN;
      this.onopen?.(undefined as never);
    });
  }

  send(data: string): void {
    // A `rest` request names its streams `paths`: read here as the `markets` of every channel.
    const request = offTheWire(JSON.parse(data) as ClientRequest);
    if (request.op === 'ping') {
      this.#deliver({
        type: 'pong',
        ...(request.id === undefined ? {} : { id: request.id }),
        ts: new Date().toISOString(),
      });
    } else if (request.op === 'subscribe') {
      this.#subscribe(request);
    } else if (request.op === 'unsubscribe') {
      this.#unsubscribe(request);
    } else {
      // One-way: nothing reaches the relay but a response's query. Answered after send returns,
      // as a relay's answer would be, so the request is waiting for it.
      const refusal = {
        type: 'error',
        ...(request.id === undefined ? {} : { id: request.id }),
        code: 'bad_request',
        message: `"${request.op}" needs a WebSocket: Server-Sent Events carry no requests`,
      };
      queueMicrotask(() => this.#deliver(refusal));
    }
  }

  close(code = 1000, reason = ''): void {
    if (this.readyState === CLOSED) return;
    this.readyState = CLOSED;
    for (const group of this.#groups.values()) group.abort?.abort();
    this.#groups.clear();
    queueMicrotask(() => this.onclose?.({ code, reason }));
  }

  #subscribe(request: SubscribeRequest): void {
    const wildcard = this.#groups.get(wildcardKey(request.channel));
    if (wildcard !== undefined && request.markets.every((market) => wildcard.announced.has(market))) {
      // Streams of a `"*"` response (the SDK resyncing one): reopened, it snapshots each anew.
      wildcard.pending = request;
      wildcard.announced.clear();
      this.#open(wildcard);
      return;
    }
    const options = optionsOf(request);
    // The relay reads `since` only from a response opened without `Last-Event-ID`: a history asked
    // for gets a response of its own rather than joining one whose streams resume.
    const group = this.#group(
      request.channel,
      options,
      isWildcard(request.markets),
      request.since === undefined ? '' : String(this.#sinceResponses++),
    );
    // Asked again with other options: the stream leaves the response of its old ones.
    this.#leave(request.channel, options, request.markets, group);
    for (const market of request.markets) if (!group.markets.includes(market)) group.markets.push(market);
    // A market without a resume point starts with a snapshot (also the SDK's way to resync one).
    for (const market of request.markets) group.positions.delete(market);
    for (const [market, point] of Object.entries(request.resume ?? {}))
      group.positions.set(market, `${point.epoch}.${point.seq.toString(36)}`);
    group.pending = request;
    this.#open(group);
  }

  #unsubscribe(request: UnsubscribeRequest): void {
    if (isWildcard(request.markets)) {
      const wildcard = this.#groups.get(wildcardKey(request.channel));
      if (wildcard !== undefined) this.#without(wildcard, request.markets);
    } else {
      this.#dropFromWildcard(request);
      this.#leave(request.channel, optionsOf(request), request.markets, undefined);
    }
    const { op: _op, ...selection } = request;
    this.#deliver({ type: 'unsubscribed', ...selection });
  }

  /**
   * Takes `markets` out of every named response of their streams (the channel and the options that
   * name a stream as in `options`) but `kept`, whatever its other options.
   */
  #leave(channel: string, options: QueryOptions, markets: string[], kept: Group | undefined): void {
    const stream = streamOptionsKey(options);
    for (const group of [...this.#groups.values()]) {
      if (group === kept || group.channel !== channel || isWildcard(group.markets)) continue;
      if (streamOptionsKey(group.options) !== stream) continue;
      if (group.markets.some((market) => markets.includes(market))) this.#without(group, markets);
    }
  }

  /** Reopens a response without `markets`, or closes it when none is left. */
  #without(group: Group, markets: string[]): void {
    group.markets = group.markets.filter((market) => !markets.includes(market));
    for (const market of markets) group.positions.delete(market);
    if (group.markets.length > 0) {
      this.#open(group);
      return;
    }
    group.abort?.abort();
    this.#groups.delete(group.key);
  }

  /**
   * Markets unsubscribed by name that the channel's `"*"` response holds: their messages are
   * dropped from it (reopening it would start every other stream of it again with a snapshot).
   */
  #dropFromWildcard(request: UnsubscribeRequest): void {
    const wildcard = this.#groups.get(wildcardKey(request.channel));
    if (wildcard === undefined) return;
    for (const market of request.markets) {
      if (!wildcard.announced.delete(market)) continue;
      wildcard.dropped.add(market);
    }
  }

  /**
   * The response of a channel and options; a `"*"` is a response of its own, and so is each
   * request's history (`own`: a key of its own, else empty).
   */
  #group(channel: string, options: QueryOptions, wildcard: boolean, own: string): Group {
    const key = wildcard ? wildcardKey(channel) : groupKey(channel, options, own);
    let group = this.#groups.get(key);
    if (group === undefined) {
      group = {
        key,
        channel,
        options,
        markets: [],
        positions: new Map(),
        abort: undefined,
        pending: undefined,
        announced: new Set(),
        dropped: new Set(),
      };
      this.#groups.set(key, group);
    }
    return group;
  }

  /** (Re)opens the group's response for its current markets, resuming from their positions. */
  #open(group: Group): void {
    group.abort?.abort();
    const abort = new AbortController();
    group.abort = abort;
    const url = new URL(this.#base);
    url.searchParams.set('channel', group.channel);
    // Paths may hold commas: a `rest` response names each in a `paths` parameter of its own.
    if (idsArePaths(group.channel))
      for (const path of group.markets) url.searchParams.append(PATHS_FIELD, path);
    else url.searchParams.set(STREAM_IDS_FIELD, group.markets.join(','));
    for (const [name, value] of queryEntries(group.options)) url.searchParams.set(name, value);
    const lastEventId = group.markets.map((market) => group.positions.get(market) ?? '').join(',');
    const headers =
      lastEventId.replaceAll(',', '') === ''
        ? this.#headers
        : { ...this.#headers, 'last-event-id': lastEventId };
    this.#fetch(url.toString(), { headers, signal: abort.signal })
      .then(async (response) => {
        if (response.status === 400 && response.body !== null) {
          await this.#refused(group, response.body);
          return;
        }
        if (response.status !== 200 || response.body === null) {
          // The wording `refusedUpgradeStatus` reads, as `ws` reports a refused upgrade.
          this.onerror?.({ message: `Unexpected server response: ${response.status}` });
          this.#lost();
          return;
        }
        await this.#read(group, response.body);
        if (!abort.signal.aborted) this.#lost();
      })
      .catch((error: unknown) => {
        if (abort.signal.aborted) return;
        this.onerror?.({ error });
        this.#lost();
      });
  }

  async #read(group: Group, body: ReadableStream<Uint8Array>): Promise<void> {
    for await (const item of readEventStream(body)) {
      if (item.kind === 'comment') {
        if (!item.text.startsWith('heartbeat ')) continue;
        const [n, ts] = item.text.slice('heartbeat '.length).split(' ');
        this.#deliver({ type: 'heartbeat', n: Number(n), ts });
        continue;
      }
      if (item.id !== undefined) this.#remember(group, item.id);
      if (item.data !== '') this.#onEvent(group, item.data);
    }
  }

  /** A query the relay refused (protocol.md "Error codes"): the request's error, the socket stays. */
  async #refused(group: Group, body: ReadableStream<Uint8Array>): Promise<void> {
    const answer = JSON.parse(await new Response(body).text()) as { error: string; message: string };
    const request = group.pending;
    this.#groups.delete(group.key);
    this.#deliver({
      type: 'error',
      ...(request?.id === undefined ? {} : { id: request.id }),
      code: answer.error,
      message: answer.message,
      channel: group.channel,
    });
  }

  #remember(group: Group, id: string): void {
    const tokens = id.split(',');
    if (tokens.length !== group.markets.length) return;
    group.markets.forEach((market, i) => {
      if (tokens[i] !== '') group.positions.set(market, tokens[i]!);
    });
  }

  #onEvent(group: Group, data: string): void {
    const message = JSON.parse(data) as {
      type: string;
      market?: string;
      recovered?: Record<string, boolean>;
      markets?: string[];
      wildcard?: boolean;
    };
    if (message.market !== undefined && group.dropped.has(message.market)) return;
    if (message.wildcard === true) {
      this.#announced(group, message as { type: string; markets: string[] }, data);
      return;
    }
    if (message.type !== 'subscribed') {
      this.onmessage?.({ data });
      return;
    }
    // The reply to the request that (re)opened this response, as the WebSocket would give it.
    const request = group.pending;
    group.pending = undefined;
    if (request === undefined) return;
    const { op: _op, resume, ...selection } = request;
    const recovered =
      resume === undefined
        ? undefined
        : Object.fromEntries(
            Object.keys(resume).map((market) => [market, message.recovered?.[market] ?? false]),
          );
    this.#deliver({ type: 'subscribed', ...selection, ...(recovered === undefined ? {} : { recovered }) });
  }

  /**
   * A `"*"` response's markets joined or left: the SDK's wildcard reads them as they are, but for
   * the markets dropped here, which stay dropped until the relay says they left.
   */
  #announced(group: Group, message: { type: string; markets: string[] }, data: string): void {
    if (message.type !== 'subscribed') {
      for (const market of message.markets) {
        group.announced.delete(market);
        group.dropped.delete(market);
      }
      this.onmessage?.({ data });
      return;
    }
    const markets = message.markets.filter((market) => !group.dropped.has(market));
    for (const market of markets) group.announced.add(market);
    if (markets.length === message.markets.length) this.onmessage?.({ data });
    else this.#deliver({ ...message, markets });
  }

  #deliver(message: object): void {
    this.onmessage?.({ data: JSON.stringify(message) });
  }

  #lost(): void {
    if (this.readyState === CLOSED) return;
    this.close(ABNORMAL_CLOSURE, 'SSE response ended');
  }
}

function groupKey(channel: string, options: QueryOptions, own: string): string {
  return JSON.stringify([channel, ...queryEntries(options), own]);
}

function wildcardKey(channel: string): string {
  return `${channel}:*`;
}
