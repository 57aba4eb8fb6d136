/**
 * @module ws/client-connection
 * The relay's side of one client's WebSocket: its subscriptions, its request rate limit, and its send path with
 * backpressure (protocol.md "Slow consumers", relay/held-back.ts) and, where the client negotiated
 * it, the shared permessage-deflate frames (protocol.md "Compression").
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
import type { RelayEvents } from '../relay/events.ts';
import { type Frame, toFrame } from '../relay/frame.ts';
import { HeldBackStreams, type SlowReaderLimits } from '../relay/held-back.ts';
import type { StreamRegistry } from '../relay/registry.ts';
import { type AnyStream, type StreamSubscriber, unknownMarketError } from '../relay/stream.ts';
import { joinStreams, sendFirstMessages } from '../relay/subscription.ts';
import { streamKey } from '../util/stream-key.ts';
import { TokenBucket } from '../util/token-bucket.ts';
import { parseClientFrame } from './frame-parser.ts';

export interface ConnectionLimits extends SlowReaderLimits {
  /** Streams one connection may hold at once. */
  maxStreams: number;
  /** Client requests per second, with a burst allowance. */
  requestsPerSecond: number;
  requestBurst: number;
}

export interface ConnectionContext {
  registry: StreamRegistry;
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
  readonly #heldBack: HeldBackStreams;
  /** Stream messages go out as the shared compressed frames (protocol.md "Compression"). */
  readonly #deflate: boolean;
  #corked = false;
  #heartbeats = 0;
  #missedPongs = 0;
  #closed = false;
  #relayClosed = false;
  #sentCloseCode: number | undefined;

  constructor(id: number, ws: WebSocket, socket: Socket, context: ConnectionContext, deflate = false) {
    this.id = id;
    this.#ws = ws;
    this.#socket = socket;
    this.#context = context;
    this.#deflate = deflate;
    this.#heldBack = new HeldBackStreams(context.limits, () => this.#closeSlowConsumer());
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
    return this.#heldBack.active;
  }

  get compresses(): boolean {
    return this.#deflate;
  }

  // --- StreamSubscriber -------------------------------------------------------------------------

  deliver(stream: AnyStream, frame: Frame): void {
    if (this.#heldBack.mustHoldBack(this.#ws.bufferedAmount)) {
      this.#heldBack.holdBack(stream);
      return;
    }
    this.#write(frame, this.#deflate);
  }

  notify(_stream: AnyStream, frame: Frame): void {
    this.#write(frame);
  }

  ended(stream: AnyStream): void {
    this.#subscriptions.delete(stream.key);
    this.#heldBack.forget(stream);
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

  /** Who ended the connection: the relay (close, terminate) or else the client. */
  get closedBy(): 'relay' | 'client' {
    return this.#relayClosed ? 'relay' : 'client';
  }

  close(code: number, reason: string): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#relayClosed = true;
    this.#ws.close(code, reason);
  }

  /** The close code the relay (or ws on its behalf) sent before terminating, if any. */
  get sentCloseCode(): number | undefined {
    return this.#sentCloseCode;
  }

  /** Drops the socket at once; `sentCode` is the close code already sent on it, if any. */
  terminate(sentCode?: number): void {
    if (!this.#closed) this.#relayClosed = true;
    this.#closed = true;
    this.#sentCloseCode ??= sentCode;
    this.#ws.terminate();
  }

  /** Drops every subscription (the connection is gone). */
  dispose(): void {
    this.#closed = true;
    this.#heldBack.clear();
    for (const stream of this.#subscriptions.values()) this.#context.registry.unsubscribe(this, stream);
    this.#subscriptions.clear();
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

    const { joined, unknown, recovered } = joinStreams(
      this.#context.registry,
      this,
      { channel, markets, depth },
      request.resume,
    );
    for (const { stream } of joined) this.#subscriptions.set(stream.key, stream);
    this.#send({
      type: 'subscribed',
      ...echoedSelection(request, channel, markets, depth),
      ...(request.resume === undefined ? {} : { recovered }),
    });
    // Exactly what a first poll would have said, without asking upstream again.
    for (const market of unknown) this.#send(unknownMarketError(channel, market));
    sendFirstMessages(this, joined);
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
      this.#heldBack.forget(stream);
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
  #write(frame: Frame, compressed = false): void {
    if (this.#closed || this.#ws.readyState !== this.#ws.OPEN) return;
    if (this.#heldBack.overflows(this.#ws.bufferedAmount)) {
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
    // The frame is complete and unmasked. Every data message goes through here, never ws.send, so
    // ws's sender (which compresses asynchronously when deflate is on) only ever writes control
    // frames (ping, close) and writing beside it keeps the order. An uncompressed message (RSV1
    // clear) is valid on a deflate connection too (RFC 7692 section 6), so replies stay plain.
    this.#socket.write(compressed ? frame.deflatedWire : frame.wire);
  }

  #onDrain(): void {
    if (this.#closed) return;
    const owed = this.#heldBack.release(this.#ws.bufferedAmount);
    if (owed === undefined) return;
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
