/**
 * @module ws/client-connection
 * The relay's side of one client's WebSocket: its subscriptions, its request rate limit, and its send path with
 * backpressure (protocol.md "Slow consumers", relay/streams/slow-consumer.ts) and, where the client negotiated
 * them, the shared permessage-deflate frames (protocol.md "Compression") and the compact encoding of
 * stream messages (protocol.md "Compact encoding").
 *
 * Stream frames wait for the relay-wide flush of ws/write-coalescer.ts and leave in one socket write;
 * the bytes waiting count toward the high-water mark, so the wait never grows a queue either.
 * Limits come before work: a frame over the request rate is neither parsed nor answered one by one
 * (ws/request-guard.ts), and reading pauses for a second, so a flood waits in the client's own
 * buffers. A connection the relay closes for a limit gets nothing more: what waits for the socket is
 * dropped, the close frame follows only what the kernel is taking, and the socket is destroyed after
 * a grace if the client has not read that far (ws/connection-close.ts).
 */
import type { Socket } from 'node:net';
import type { RawData, WebSocket } from 'ws';
import { isChannel } from '../protocol/channels.ts';
import {
  type BookDepth,
  type Channel,
  type ClientRequest,
  closeCodes,
  type ErrorCode,
  type RequestId,
  type ServerMessage,
  type SubscribeRequest,
  type UnsubscribeRequest,
} from '../protocol/messages.ts';
import type { Refusal } from '../relay/admission/market.ts';
import {
  fetchClusterReplay,
  joinStreams,
  refusalError,
  type StreamSelection,
  sendFirstMessages,
} from '../relay/session/subscription.ts';
import { type Frame, toFrame, type WireForm } from '../relay/streams/frame.ts';
import type { ClusterReplay } from '../relay/streams/registry.ts';
import { SlowConsumerPolicy } from '../relay/streams/slow-consumer.ts';
import type { AnyStream, StreamSubscriber } from '../relay/streams/stream.ts';
import { streamKey } from '../util/keys.ts';
import { ConnectionClose } from './connection-close.ts';
import type { ConnectionContext } from './connection-context.ts';
import { echoedSelection, withId } from './echo.ts';
import { parseClientFrame } from './frame-parser.ts';
import { RATE_WINDOW_MS, RequestGuard } from './request-guard.ts';
import { RequestOrder } from './request-order.ts';
import { SocketWriter, type WriteCounts } from './socket-writer.ts';
import type { WriteCoalescer } from './write-coalescer.ts';

export class ClientConnection implements StreamSubscriber {
  readonly id: number;
  readonly openedAt = Date.now();
  readonly #ws: WebSocket;
  readonly #context: ConnectionContext;
  readonly #guard: RequestGuard;
  readonly #subscriptions = new Map<string, AnyStream>();
  readonly #heldBack: SlowConsumerPolicy;
  /** Which of each frame's shared forms this connection takes (protocol.md "Compression", "Compact encoding"). */
  readonly #form: WireForm;
  readonly #coalescer: WriteCoalescer;
  readonly #writer: SocketWriter;
  readonly #order = new RequestOrder();
  readonly #close: ConnectionClose;
  #heartbeats = 0;
  #missedPongs = 0;
  #throttled = false;

  constructor(
    id: number,
    ws: WebSocket,
    socket: Socket,
    context: ConnectionContext,
    options: { form?: WireForm; apiKey?: string } = {},
  ) {
    this.id = id;
    context.marketAdmission.open(this, options.apiKey);
    this.#ws = ws;
    this.#context = context;
    this.#form = options.form ?? { encoding: 'json', deflate: false };
    this.#heldBack = new SlowConsumerPolicy(context.limits, () => this.#closeSlowConsumer());
    this.#guard = new RequestGuard(context.limits);
    this.#coalescer = context.coalescer;
    // Every data message goes out through the writer as a complete, unmasked frame, never ws.send,
    // so ws's sender (which compresses asynchronously when deflate is on) only ever writes control
    // frames (ping, close) and writing beside it keeps the order. An uncompressed message (RSV1
    // clear) is valid on a deflate connection too (RFC 7692 section 6), so replies stay plain.
    this.#writer = new SocketWriter(ws, socket, context.coalescer, {
      heldBack: this.#heldBack,
      onOverflow: () => this.#closeSlowConsumer(),
      onDrained: () => this.#onDrain(),
    });
    this.#close = new ConnectionClose(ws, socket, this.#writer, context.limits);
    ws.on('message', (data, isBinary) => this.#onMessage(data, isBinary));
    ws.on('pong', () => {
      this.#missedPongs = 0;
    });
  }

  /** Bytes written but not yet taken by the kernel, plus bytes waiting for the next flush. */
  get bufferedBytes(): number {
    return this.#writer.bufferedBytes;
  }

  get writeCounts(): Readonly<WriteCounts> {
    return this.#writer.counts;
  }

  get isHoldingBack(): boolean {
    return this.#heldBack.active;
  }

  get compresses(): boolean {
    return this.#form.deflate;
  }

  get encoding(): WireForm['encoding'] {
    return this.#form.encoding;
  }

  // --- StreamSubscriber -------------------------------------------------------------------------

  deliver(stream: AnyStream, frame: Frame): void {
    if (this.#close.closed) return;
    if (this.#heldBack.mustHoldBack(this.#writer.bufferedBytes)) {
      this.#heldBack.holdBack(stream);
      return;
    }
    const wire = frame.wireFor(this.#form, stream.number);
    // One stream has nothing to share a write with: waiting would only add latency.
    const streams = this.#subscriptions.size;
    if (streams > 1 && this.#coalescer.windowMs > 0) this.#writer.enqueue(wire, streams);
    else this.#writer.write(wire);
  }

  notify(_stream: AnyStream, frame: Frame): void {
    this.#writer.write(frame.wire);
  }

  ended(stream: AnyStream): void {
    this.#subscriptions.delete(stream.key);
    this.#heldBack.forget(stream);
  }

  // --- Heartbeats (protocol.md "Transport") -------------------------------------------------------

  /**
   * One heartbeat period. A client that missed two pings in a row is not reading: it is closed as a
   * slow consumer (4008, which it sees if it ever reads again; a peer that is gone never will, and
   * the socket goes after the linger).
   */
  heartbeat(now: Date): void {
    if (this.#close.closed) return;
    if (this.#missedPongs >= 2) {
      this.#closeSlowConsumer();
      return;
    }
    this.#missedPongs += 1;
    this.#ws.ping();
    this.#heartbeats += 1;
    this.#send({ type: 'heartbeat', n: this.#heartbeats, ts: now.toISOString() });
  }

  onceClosed(listener: () => void): void {
    if (this.#ws.readyState === this.#ws.CLOSED) listener();
    else this.#ws.once('close', () => listener());
  }

  /** Who ended the connection: the relay (close, terminate) or else the client. */
  get closedBy(): 'relay' | 'client' {
    return this.#close.closedBy;
  }

  close(code: number, reason: string): void {
    this.#close.close(code, reason);
  }

  /** Closes for a limit (ws/connection-close.ts): nothing more read, destroyed after the grace. */
  closeForLimit(code: number, reason: string): void {
    this.#close.forLimit(code, reason);
  }

  /** ws sent the close frame `code` for a bad client frame; destroyed after the grace. */
  closedOnBadFrame(code: number): void {
    this.#close.onBadFrame(code);
  }

  /** The close code the relay (or ws on its behalf) sent, if any. */
  get sentCloseCode(): number | undefined {
    return this.#close.sentCode;
  }

  /** Drops the socket at once. */
  terminate(): void {
    this.#close.terminate();
  }

  /** Drops every subscription (the connection is gone). */
  dispose(): void {
    this.#close.stopWriting();
    this.#heldBack.clear();
    this.#context.marketAdmission.close(this);
    for (const stream of this.#subscriptions.values()) this.#context.registry.unsubscribe(this, stream);
    this.#subscriptions.clear();
  }

  // --- Requests ---------------------------------------------------------------------------------

  #onMessage(data: RawData, isBinary: boolean): void {
    // Frames ws had already read when the connection was closed or paused.
    if (this.#close.closed) return;
    switch (this.#guard.admit()) {
      case 'handle':
        break;
      case 'refuse': {
        const { requestsPerSecond } = this.#context.limits;
        this.#error(undefined, 'rate_limited', `more than ${requestsPerSecond} requests per second`);
        this.#throttle();
        return;
      }
      case 'drop':
        this.#throttle();
        return;
      case 'close':
        this.closeForLimit(closeCodes.requestFlood, 'request flood');
        return;
    }
    const parsed = parseClientFrame(data, isBinary);
    if (!parsed.ok) {
      this.#error(parsed.id, parsed.code ?? 'bad_request', parsed.message);
      return;
    }
    this.#order.run(() => this.#handleSafely(parsed.request));
  }

  #handleSafely(request: ClientRequest): void {
    if (this.#close.closed) return;
    try {
      this.#handle(request);
    } catch {
      // A bug must cost this one request, never the connection or the process; its words stay inside.
      this.#error(request.id, 'internal', 'internal error');
    }
  }

  /** Stops reading for the rest of the window: a flood waits in the client's own buffers. */
  #throttle(): void {
    if (this.#throttled || this.#close.closed) return;
    this.#throttled = true;
    this.#ws.pause();
    setTimeout(
      () => {
        this.#throttled = false;
        if (!this.#close.closed) this.#ws.resume();
      },
      // A whole window, not just until the next token: each resume makes ws read (and frame) a
      // socket chunk of thousands of queued frames, so a flood costs one chunk per second.
      Math.max(RATE_WINDOW_MS, this.#guard.waitMs),
    ).unref();
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

    // Markets this connection does not hold yet may be refused (unknown, or over its limits).
    const refused = this.#context.marketAdmission.admit(this, channel, added);
    const selection = { channel, markets, depth };
    const fetching = fetchClusterReplay(this.#context.registry, selection, request.resume);
    if (fetching === undefined) {
      this.#join(request, selection, refused, undefined);
      return;
    }
    this.#order.hold(
      fetching.then(
        (replay) => this.#join(request, selection, refused, replay),
        () => this.#join(request, selection, refused, undefined),
      ),
    );
  }

  #join(
    request: SubscribeRequest,
    selection: StreamSelection,
    refused: ReadonlyMap<string, Refusal>,
    cluster: ClusterReplay | undefined,
  ): void {
    if (this.#close.closed) return;
    const { channel, markets, depth } = selection;
    const { joined, recovered } = joinStreams(
      this.#context.registry,
      this,
      selection,
      request.resume,
      refused,
      cluster,
    );
    for (const { stream } of joined) this.#subscriptions.set(stream.key, stream);
    // Written now, before anything of these streams: nothing above delivers to this connection
    // (joinStreams adds it to each stream without sending; a cluster replay that restores a stream
    // leaves it out), and a frame queued for the coalescing window is of a stream joined earlier.
    // So on a compact connection every stream's number arrives before its first data message.
    this.#send({
      type: 'subscribed',
      ...echoedSelection(request, channel, [...markets], depth),
      ...(request.resume === undefined ? {} : { recovered }),
      ...(this.#form.encoding === 'compact'
        ? { streams: Object.fromEntries(joined.map(({ market, stream }) => [market, stream.number])) }
        : {}),
    });
    // Stream errors naming the market, as a first poll's unknown_market would (protocol.md).
    for (const [market, refusal] of refused) this.#send(refusalError(channel, market, refusal));
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
    if (isChannel(request.channel)) return request.channel;
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
    // Answers, statuses and errors are never delayed: they leave now, behind (and in the same write
    // as) any stream frames still queued, so the connection's order is kept.
    this.#writer.write(toFrame(message).wire);
  }

  #onDrain(): void {
    if (this.#close.closed) return;
    const streams = this.#heldBack.resendOwed(this.bufferedBytes, this.#subscriptions, (stream, frame) =>
      this.deliver(stream, frame),
    );
    if (streams !== undefined) this.#context.events.emit('connection:conflated', { id: this.id, streams });
  }

  #closeSlowConsumer(): void {
    if (this.#close.closed) return;
    this.#context.events.emit('connection:slow-consumer', {
      id: this.id,
      bufferedBytes: this.bufferedBytes,
    });
    this.#close.slowConsumer(closeCodes.slowConsumer, 'slow consumer');
  }
}
