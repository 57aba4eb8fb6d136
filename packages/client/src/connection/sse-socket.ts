/**
 * @module client/connection/sse-socket
 * The WebSocket the SDK expects, made of Server-Sent Events responses (protocol.md "Server-Sent
 * Events"), for where a WebSocket cannot be opened. SSE carries one channel (and depth) per
 * response and takes its subscription from the URL, so each `subscribe` / `unsubscribe` the SDK
 * sends reopens the response of that channel with the new market list, resuming every stream it
 * already had through the positions of the last event id (no gap, no snapshot), and is answered
 * here with the `subscribed` / `unsubscribed` reply the SDK matches by `id`. `ping` is answered
 * here too. A response that fails or ends closes the whole socket (code 1006): the SDK then
 * reconnects and resubscribes with its resume points, which become the new `Last-Event-ID`.
 *
 * A `"*"` response cannot leave out one of its markets (its query is the wildcard): unsubscribing
 * one of them by name (the SDK's `stream.unsubscribe()`) answers here and drops that market's
 * messages from the response until the relay announces it left the active list.
 */
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

const CONNECTING = 0;
const CLOSED = 3;
const ABNORMAL_CLOSURE = 1006;

export type FetchLike = (
  url: string,
  init: { headers: Record<string, string>; signal: AbortSignal },
) => Promise<{ status: number; body: ReadableStream<Uint8Array> | null }>;

/** One open response: a channel and depth, its markets in URL order, each one's last position. */
interface Group {
  channel: string;
  depth: number | null | undefined;
  /** A grouped book's step (the `group` query parameter). */
  group: string | undefined;
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
    } else if (
      request.op === 'subscribe' &&
      request.interval === undefined &&
      request.threshold === undefined &&
      request.since === undefined
    ) {
      this.#subscribe(request);
    } else if (request.op === 'unsubscribe') {
      this.#unsubscribe(request);
    } else {
      // One-way: a stream's options change by reconnecting with the new query. Answered after
      // send returns, as a relay's answer would be, so the request is waiting for it. A paced
      // or gated stream is refused for now: one response per (channel, depth) cannot mix paces.
      const refusal = {
        type: 'error',
        ...(request.id === undefined ? {} : { id: request.id }),
        code: 'bad_request',
        message:
          request.op === 'subscribe'
            ? `"${paceOrHistoryOption(request)}" needs a WebSocket in this SDK for now (the relay's SSE takes it as a query parameter)`
            : `"${request.op}" needs a WebSocket: Server-Sent Events carry no requests`,
        ...(request.op === 'subscribe' ? { channel: request.channel } : {}),
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
    const wildcard = this.#groups.get(groupKey(request.channel, request.depth, request.group, true));
    if (wildcard !== undefined && request.markets.every((market) => wildcard.announced.has(market))) {
      // Streams of a `"*"` response (the SDK resyncing one): reopened, it snapshots each anew.
      wildcard.pending = request;
      wildcard.announced.clear();
      this.#open(wildcard);
      return;
    }
    const group = this.#group(request.channel, request.depth, request.group, isWildcard(request.markets));
    for (const market of request.markets) if (!group.markets.includes(market)) group.markets.push(market);
    // A market without a resume point starts with a snapshot (also the SDK's way to resync one).
    for (const market of request.markets) group.positions.delete(market);
    for (const [market, point] of Object.entries(request.resume ?? {}))
      group.positions.set(market, `${point.epoch}.${point.seq.toString(36)}`);
    group.pending = request;
    this.#open(group);
  }

  #unsubscribe(request: UnsubscribeRequest): void {
    const wildcard = isWildcard(request.markets);
    if (!wildcard) this.#dropFromWildcard(request);
    const group = this.#groups.get(groupKey(request.channel, request.depth, request.group, wildcard));
    if (group !== undefined) {
      group.markets = group.markets.filter((market) => !request.markets.includes(market));
      for (const market of request.markets) group.positions.delete(market);
      if (group.markets.length === 0) {
        group.abort?.abort();
        this.#groups.delete(groupKey(group.channel, group.depth, group.group, wildcard));
      } else {
        this.#open(group);
      }
    }
    const { op: _op, ...selection } = request;
    this.#deliver({ type: 'unsubscribed', ...selection });
  }

  /**
   * Markets unsubscribed by name that the channel's `"*"` response holds: their messages are
   * dropped from it (reopening it would start every other stream of it again with a snapshot).
   */
  #dropFromWildcard(request: UnsubscribeRequest): void {
    const wildcard = this.#groups.get(groupKey(request.channel, request.depth, request.group, true));
    if (wildcard === undefined) return;
    for (const market of request.markets) {
      if (!wildcard.announced.delete(market)) continue;
      wildcard.dropped.add(market);
    }
  }

  /** The response of a channel and depth; a `"*"` is a response of its own. */
  #group(
    channel: string,
    depth: number | null | undefined,
    step: string | undefined,
    wildcard: boolean,
  ): Group {
    const key = groupKey(channel, depth, step, wildcard);
    let group = this.#groups.get(key);
    if (group === undefined) {
      group = {
        channel,
        depth,
        group: step,
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
    if (group.channel === 'rest') for (const path of group.markets) url.searchParams.append('paths', path);
    else url.searchParams.set('markets', group.markets.join(','));
    if (group.channel === 'book')
      url.searchParams.set('depth', group.depth == null ? 'full' : String(group.depth));
    if (group.group !== undefined) url.searchParams.set('group', group.group);
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
    this.#groups.delete(groupKey(group.channel, group.depth, group.group, isWildcard(group.markets)));
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

/** The option of a `subscribe` this transport cannot serve yet, for its refusal. */
function paceOrHistoryOption(request: SubscribeRequest): 'interval' | 'threshold' | 'since' {
  if (request.interval !== undefined) return 'interval';
  return request.threshold !== undefined ? 'threshold' : 'since';
}

function groupKey(
  channel: string,
  depth: number | null | undefined,
  step: string | undefined,
  wildcard: boolean,
): string {
  return `${channel}:${wildcard ? '*' : `${depth ?? 'full'}:${step ?? ''}`}`;
}
