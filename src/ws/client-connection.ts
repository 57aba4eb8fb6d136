/**
 * @module ws/client-connection
 * The relay's side of one client's WebSocket: its subscriptions, its request rate limit, and its send path with
 * backpressure (protocol.md "Slow consumers"). Above the high-water mark, stream messages are held
 * back and only the fact that a stream owes a snapshot is remembered, so a slow client costs a set
 * of stream references, never a growing queue; on drain each held stream gets one fresh snapshot.
 */
import type { Socket } from 'node:net';
import type { RawData, WebSocket } from 'ws';
import {
  type BookDepth,
  type Channel,
  type ClientRequest,
  channels,
  closeCodes,
  type ErrorCode,
  type RequestId,
  type ServerMessage,
  type SubscribeRequest,
  type UnsubscribeRequest,
} from '../protocol/messages.ts';
import type { Admission } from '../relay/admission.ts';
import type { RelayEvents } from '../relay/events.ts';
import { type Frame, toFrame } from '../relay/frame.ts';
import type { StreamRegistry } from '../relay/registry.ts';
import type { AnyStream, StreamSubscriber } from '../relay/stream.ts';
import { streamKey } from '../util/stream-key.ts';
import { TokenBucket } from '../util/token-bucket.ts';
import { parseClientFrame } from './frame-parser.ts';

export interface ConnectionLimits {
  /** Streams one connection may hold at once. */
  maxStreams: number;
  /** Client requests per second, with a burst allowance. */
  requestsPerSecond: number;
  requestBurst: number;
  /** Send-buffer bytes above which stream messages are held back (conflation). */
  highWaterBytes: number;
  /** Send-buffer bytes that close the connection at once with 4008. */
  maxBufferBytes: number;
  /** How long the buffer may stay above the high-water mark before the connection is closed with 4008. */
  slowConsumerTimeoutMs: number;
}

export interface ConnectionContext {
  registry: StreamRegistry;
  /** Which new markets a subscription may add (isolation limits, unknown ids). */
  admission: Admission;
  events: RelayEvents;
  limits: ConnectionLimits;
}

export class ClientConnection implements StreamSubscriber {
  readonly id: number;
  readonly openedAt = Date.now();
  readonly #ws: WebSocket;
  readonly #socket: Socket;
  readonly #context: ConnectionContext;
  readonly #rate: TokenBucket;
  readonly #subscriptions = new Map<string, AnyStream>();
  /** Streams whose messages were held back while the buffer was full: each owes one snapshot. */
  readonly #owedSnapshots = new Set<AnyStream>();
  #slowTimer: NodeJS.Timeout | undefined;
  #corked = false;
  #heartbeats = 0;
  #missedPongs = 0;
  #closed = false;

  constructor(id: number, ws: WebSocket, socket: Socket, context: ConnectionContext, apiKey?: string) {
    this.id = id;
    context.admission.open(this, apiKey);
    this.#ws = ws;
    this.#socket = socket;
    this.#context = context;
    this.#rate = new TokenBucket({
      ratePerSecond: context.limits.requestsPerSecond,
      capacity: context.limits.requestBurst,
    });
    ws.on('message', (data, isBinary) => this.#onMessage(data, isBinary));
    ws.on('pong', () => {
      this.#missedPongs = 0;
    });
    socket.on('drain', () => this.#onDrain());
  }

  get bufferedBytes(): number {
    return this.#ws.bufferedAmount;
  }

  get isHoldingBack(): boolean {
    return this.#slowTimer !== undefined;
  }

  // --- StreamSubscriber -------------------------------------------------------------------------

  deliver(stream: AnyStream, frame: Frame): void {
    if (this.#slowTimer !== undefined || this.#ws.bufferedAmount > this.#context.limits.highWaterBytes) {
      this.#holdBack(stream);
      return;
    }
    this.#write(frame);
  }

  notify(_stream: AnyStream, frame: Frame): void {
    this.#write(frame);
  }

  ended(stream: AnyStream): void {
    this.#subscriptions.delete(stream.key);
    this.#owedSnapshots.delete(stream);
  }

  // --- Heartbeats (protocol.md "Transport") -------------------------------------------------------

  /** One heartbeat period: returns false when the client missed two pings in a row. */
  heartbeat(now: Date): boolean {
    if (this.#missedPongs >= 2) return false;
    this.#missedPongs += 1;
    this.#ws.ping();
    this.#heartbeats += 1;
    this.#send({ type: 'heartbeat', n: this.#heartbeats, ts: now.toISOString() });
    return true;
  }

  onceClosed(listener: () => void): void {
    if (this.#ws.readyState === this.#ws.CLOSED) listener();
    else this.#ws.once('close', () => listener());
  }

  close(code: number, reason: string): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#ws.close(code, reason);
  }

  terminate(): void {
    this.#closed = true;
    this.#ws.terminate();
  }

  /** Drops every subscription (the connection is gone). */
  dispose(): void {
    this.#closed = true;
    this.#context.admission.close(this);
    clearTimeout(this.#slowTimer);
    this.#slowTimer = undefined;
    for (const stream of this.#subscriptions.values()) this.#context.registry.unsubscribe(this, stream);
    this.#subscriptions.clear();
    this.#owedSnapshots.clear();
  }

  // --- Requests ---------------------------------------------------------------------------------

  #onMessage(data: RawData, isBinary: boolean): void {
    const parsed = parseClientFrame(data, isBinary);
    if (this.#rate.tokens < 1) {
      const { requestsPerSecond } = this.#context.limits;
      const id = parsed.ok ? parsed.request.id : parsed.id;
      this.#error(id, 'rate_limited', `more than ${requestsPerSecond} requests per second`);
      return;
    }
    this.#rate.reserve();
    if (!parsed.ok) {
      this.#error(parsed.id, 'bad_request', parsed.message);
      return;
    }
    try {
      this.#handle(parsed.request);
    } catch (error) {
      // A bug must cost this one request, never the connection or the process.
      this.#error(parsed.request.id, 'internal', error instanceof Error ? error.message : 'internal error');
    }
  }

  #handle(request: ClientRequest): void {
    switch (request.op) {
      case 'ping':
        this.#send({ type: 'pong', ...withId(request.id), ts: new Date().toISOString() });
        return;
      case 'subscribe':
        this.#subscribe(request);
        return;
      case 'unsubscribe':
        this.#unsubscribe(request);
        return;
    }
  }

  #subscribe(request: SubscribeRequest): void {
    const channel = this.#knownChannel(request);
    if (channel === undefined) return;
    if (channel !== 'book' && request.depth !== undefined) {
      this.#error(request.id, 'bad_request', '`depth` applies to the book channel only', channel);
      return;
    }
    const depth: BookDepth | undefined = channel === 'book' ? (request.depth ?? null) : undefined;
    const markets = [...new Set(request.markets)];
    const added = markets.filter((market) => !this.#subscriptions.has(streamKey(channel, market, depth)));
    const { maxStreams } = this.#context.limits;
    if (this.#subscriptions.size + added.length > maxStreams) {
      this.#error(request.id, 'limit_exceeded', `at most ${maxStreams} streams per connection`, channel);
      return;
    }

    const subscribed: { market: string; stream: AnyStream; replay: Frame[] | undefined }[] = [];
    const recovered: Record<string, boolean> = {};
    // Markets this connection does not hold yet may be refused (unknown, or over its limits).
    const refused = this.#context.admission.admit(this, channel, added);
    for (const market of markets) {
      if (refused.has(market)) continue;
      const stream = this.#context.registry.subscribe(this, { channel, market, depth });
      this.#subscriptions.set(stream.key, stream);
      const resumeFrom = request.resume?.[market];
      const replay =
        resumeFrom === undefined ? undefined : stream.updatesSince(resumeFrom.epoch, resumeFrom.seq);
      if (resumeFrom !== undefined) recovered[market] = replay !== undefined;
      subscribed.push({ market, stream, replay });
    }
    this.#send({
      type: 'subscribed',
      ...echoedSelection(request, channel, markets, depth),
      ...(request.resume === undefined ? {} : { recovered }),
    });
    // Stream errors naming the market, as a first poll's unknown_market would (protocol.md).
    for (const [market, { code, message }] of refused)
      this.#send({ type: 'error', code, message, channel, market });
    for (const { stream, replay } of subscribed) {
      if (replay !== undefined) {
        for (const frame of replay) this.deliver(stream, frame);
      } else if (stream.hasState) {
        // A repeated subscribe is the way to resync one stream: always a fresh snapshot.
        this.deliver(stream, stream.snapshotFrame());
      }
      if (stream.freshness === 'stale') this.notify(stream, stream.statusFrame());
    }
  }

  #unsubscribe(request: UnsubscribeRequest): void {
    const channel = this.#knownChannel(request);
    if (channel === undefined) return;
    const depth: BookDepth | undefined = channel === 'book' ? (request.depth ?? null) : undefined;
    const markets = [...new Set(request.markets)];
    for (const market of markets) {
      const stream = this.#subscriptions.get(streamKey(channel, market, depth));
      if (stream === undefined) continue;
      this.#subscriptions.delete(stream.key);
      this.#owedSnapshots.delete(stream);
      this.#context.registry.unsubscribe(this, stream);
    }
    this.#send({ type: 'unsubscribed', ...echoedSelection(request, channel, markets, depth) });
  }

  #knownChannel(request: SubscribeRequest | UnsubscribeRequest): Channel | undefined {
    if ((channels as readonly string[]).includes(request.channel)) return request.channel as Channel;
    this.#error(request.id, 'unknown_channel', `unknown channel "${request.channel}"`, request.channel);
    return undefined;
  }

  #error(id: RequestId | undefined, code: ErrorCode, message: string, channel?: string): void {
    this.#context.events.emit('request:error', { id: this.id, code });
    this.#send({
      type: 'error',
      ...withId(id),
      code,
      message,
      ...(channel === undefined ? {} : { channel }),
    });
  }

  // --- Sending ----------------------------------------------------------------------------------

  #send(message: ServerMessage): void {
    this.#write(toFrame(message));
  }

  /**
   * Writes within one tick (one poll cycle's fan-out) are corked and leave in one syscall, so a
   * client subscribed to many markets of one price batch costs one write, not one per market.
   */
  #write(frame: Frame): void {
    if (this.#closed || this.#ws.readyState !== this.#ws.OPEN) return;
    if (this.#ws.bufferedAmount > this.#context.limits.maxBufferBytes) {
      this.#closeSlowConsumer();
      return;
    }
    if (!this.#corked) {
      this.#corked = true;
      this.#socket.cork();
      process.nextTick(() => {
        this.#corked = false;
        this.#socket.uncork();
      });
    }
    // The frame is complete and unmasked; with permessage-deflate off, ws keeps no send state of
    // its own, so writing it to the socket beside ws's own writes (pings, close) keeps the order.
    this.#socket.write(frame.wire);
  }

  #holdBack(stream: AnyStream): void {
    this.#owedSnapshots.add(stream);
    if (this.#slowTimer !== undefined) return;
    this.#slowTimer = setTimeout(() => this.#closeSlowConsumer(), this.#context.limits.slowConsumerTimeoutMs);
    this.#slowTimer.unref();
  }

  #onDrain(): void {
    if (this.#slowTimer === undefined || this.#closed) return;
    if (this.#ws.bufferedAmount > this.#context.limits.highWaterBytes) return;
    clearTimeout(this.#slowTimer);
    this.#slowTimer = undefined;
    const owed = [...this.#owedSnapshots];
    this.#owedSnapshots.clear();
    for (const stream of owed) {
      if (this.#subscriptions.get(stream.key) === stream && stream.hasState)
        this.deliver(stream, stream.snapshotFrame());
    }
    this.#context.events.emit('connection:conflated', { id: this.id, streams: owed.length });
  }

  #closeSlowConsumer(): void {
    if (this.#closed) return;
    this.#context.events.emit('connection:slow-consumer', {
      id: this.id,
      bufferedBytes: this.#ws.bufferedAmount,
    });
    this.close(closeCodes.slowConsumer, 'slow consumer');
  }
}

/** What a `subscribed` / `unsubscribed` answer echoes of its request. */
function echoedSelection(
  request: SubscribeRequest | UnsubscribeRequest,
  channel: Channel,
  markets: string[],
  depth: BookDepth | undefined,
): { id?: RequestId; channel: Channel; markets: string[]; depth?: BookDepth } {
  return { ...withId(request.id), channel, markets, ...(depth === undefined ? {} : { depth }) };
}

function withId(id: RequestId | undefined): { id?: RequestId } {
  return id === undefined ? {} : { id };
}
