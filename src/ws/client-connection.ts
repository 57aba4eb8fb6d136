/**
 * @module ws/client-connection
 * One client's WebSocket, its I/O only: reading and parsing its frames under the request rate
 * limit, heartbeats, and the send path with backpressure and, where the client negotiated them, the
 * shared permessage-deflate frames (protocol.md "Compression") and the compact encoding of stream
 * messages (protocol.md "Compact encoding"). What a request does (admission, joining streams,
 * resume, the answers, holding back a slow reader) is its session's (relay/session/session.ts).
 *
 * Stream frames wait for a relay-wide flush of ws/write-coalescer.ts (the end of the event-loop
 * turn, or of the connection's window while it is busy) and leave in one socket write; the bytes
 * waiting count toward the high-water mark, so the wait never grows a queue either.
 * Limits come before work: a frame over the request rate is neither parsed nor answered one by one
 * (ws/request-guard.ts), and reading pauses for a second, so a flood waits in the client's own
 * buffers. The rate limit is this transport's, not the session's: it judges raw frames before any
 * parsing, and its remedies (pausing the socket, closing 4429) are the socket's. A connection the
 * relay closes for a limit gets nothing more: what waits for the socket is dropped, the close frame
 * follows only what the kernel is taking, and the socket is destroyed after a grace if the client
 * has not read that far (`ConnectionClose` below).
 *
 * How the WebSocket ends, and who ended it (`ConnectionClose`): a plain close after what is queued,
 * a close for a limit (nothing more read, the socket destroyed after `closeGraceMs` if the client
 * has not read up to the close frame), a slow-consumer close (the same, but still read, and kept
 * for `slowConsumerLingerMs`), the close ws sends itself on a bad client frame (the same grace), or
 * termination at once. Once closing starts, nothing more is queued or written. A close for a limit
 * drops what waits for the socket (ws/socket-writer.ts), so its close frame follows only the write
 * the kernel is taking, and ends our side after it. The socket then stays half-closed until the
 * client has read that far: a client that stopped reading and reads again seconds later still
 * finds the close frame, and sees the code rather than 1006. It is destroyed only after the grace,
 * which bounds how long a client that never reads holds it (and the bytes of that one write).
 */
import type { Socket } from 'node:net';
import type { RawData, WebSocket } from 'ws';
import { closeCodes } from '../../packages/protocol/src/protocol/messages.ts';
import { Session, type SessionSink } from '../relay/session/session.ts';
import { type Frame, toFrame, type WireForm } from '../relay/streams/frame.ts';
import type { AnyStream } from '../relay/streams/stream.ts';
import type { ConnectionContext, ConnectionLimits } from './connection-context.ts';
import { parseClientFrame } from './frame-parser.ts';
import { RATE_WINDOW_MS, RequestGuard } from './request-guard.ts';
import { SocketWriter, type WriteCounts, wireOfForm } from './socket-writer.ts';
import type { WriteCoalescer } from './write-coalescer.ts';

export class ClientConnection implements SessionSink {
  readonly id: number;
  readonly openedAt = Date.now();
  readonly session: Session;
  readonly #ws: WebSocket;
  readonly #context: ConnectionContext;
  readonly #guard: RequestGuard;
  /** Which of each frame's shared forms this connection takes (protocol.md "Compression", "Compact encoding"). */
  readonly #form: WireForm;
  /** JSON without deflate: every frame's own bytes (the common case, decided once). */
  readonly #wireOf: (frame: Frame, stream: number) => Buffer;
  readonly #coalescer: WriteCoalescer;
  readonly #writer: SocketWriter;
  readonly #close: ConnectionClose;
  #heartbeats = 0;
  #missedPongs = 0;
  #throttled = false;

  constructor(
    id: number,
    ws: WebSocket,
    socket: Socket,
    context: ConnectionContext,
    options: { form?: WireForm; apiKey?: string; addressGroup?: string; onClose?: () => void } = {},
  ) {
    this.id = id;
    this.#ws = ws;
    this.#context = context;
    this.#form = options.form ?? { encoding: 'json', deflate: false };
    this.#wireOf = wireOfForm(this.#form);
    this.session = new Session(id, this, context, {
      apiKey: options.apiKey,
      addressGroup: options.addressGroup,
      ...this.#form,
      ...(options.onClose === undefined ? {} : { onClose: options.onClose }),
    });
    this.#guard = new RequestGuard(context.limits);
    this.#coalescer = context.coalescer;
    // Every data message goes out through the writer as a complete, unmasked frame, never ws.send,
    // so ws's sender (which compresses asynchronously when deflate is on) only ever writes control
    // frames (ping, close) and writing beside it keeps the order. An uncompressed message (RSV1
    // clear) is valid on a deflate connection too (RFC 7692 section 6), so replies stay plain.
    this.#writer = new SocketWriter(ws, socket, context.coalescer, {
      ...context.limits, // its maxBufferBytes and highWaterBytes
      onOverflow: () => this.session.slowConsumer(),
      onDrained: () => this.session.drained(),
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
    return this.session.isHoldingBack;
  }

  get compresses(): boolean {
    return this.#form.deflate;
  }

  get encoding(): WireForm['encoding'] {
    return this.#form.encoding;
  }

  // --- SessionSink ------------------------------------------------------------------------------

  /**
   * The bytes waiting for the client, undefined once nothing more is queued or written. Read on every
   * delivery: the writer's flag says what the close's does (closing stops the writer).
   */
  get backlog(): number | undefined {
    const writer = this.#writer;
    return writer.stopped ? undefined : writer.bufferedBytes;
  }

  get requestAllowance(): { available: number; burst: number; per_second: number } {
    return this.#guard.allowance;
  }

  writeStream(stream: AnyStream, frame: Frame, alone: boolean): void {
    const wire = this.#wireOf(frame, stream.number);
    // One stream has nothing to share a write with: queueing would only cost the queue.
    if (this.#coalescer.enabled && !alone) this.#writer.enqueue(wire);
    else this.#writer.write(wire);
  }

  write(frame: Frame): void {
    // Never delayed: it leaves now, behind (and in the same write as) any stream frames still
    // queued, so the connection's order is kept.
    this.#writer.write(frame.wire);
  }

  closeSlowConsumer(): void {
    this.#close.slowConsumer(closeCodes.slowConsumer, 'slow consumer');
  }

  wantDrains(wanted: boolean): void {
    this.#writer.drainWaiters += wanted ? 1 : -1;
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
      this.session.slowConsumer();
      return;
    }
    this.#missedPongs += 1;
    this.#ws.ping();
    this.#heartbeats += 1;
    this.write(toFrame({ type: 'heartbeat', n: this.#heartbeats, ts: now.toISOString() }));
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

  /** The relay is draining: the client should reconnect (elsewhere) in `reconnectInMs`. */
  goingAway(reconnectInMs: number): void {
    if (this.#close.closed) return;
    this.write(toFrame({ type: 'going_away', reconnect_in_ms: reconnectInMs }));
  }

  /** Closes for a limit (`ConnectionClose`): nothing more read, destroyed after the grace. */
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

  /** The connection is gone: nothing more is written, and its session leaves everything. */
  dispose(): void {
    this.#close.stopWriting();
    this.session.close();
  }

  // --- Reading ----------------------------------------------------------------------------------

  #onMessage(data: RawData, isBinary: boolean): void {
    // Frames ws had already read when the connection was closed or paused.
    if (this.#close.closed) return;
    switch (this.#guard.admit()) {
      case 'handle':
        break;
      case 'refuse': {
        const { requestsPerSecond } = this.#context.limits;
        this.session.error(undefined, 'rate_limited', `more than ${requestsPerSecond} requests per second`);
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
      this.session.error(parsed.id, parsed.code ?? 'bad_request', parsed.message);
      return;
    }
    this.session.handle(parsed.request);
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
}

/** How the connection ends, and who ended it (see the module's header). */
class ConnectionClose {
  readonly #ws: WebSocket;
  readonly #socket: Socket;
  readonly #writer: SocketWriter;
  readonly #limits: Pick<ConnectionLimits, 'closeGraceMs' | 'slowConsumerLingerMs'>;
  #closed = false;
  #relayClosed = false;
  /** The close code the relay decided and sent, whether or not the client read as far as it. */
  #sentCode: number | undefined;

  constructor(
    ws: WebSocket,
    socket: Socket,
    writer: SocketWriter,
    limits: Pick<ConnectionLimits, 'closeGraceMs' | 'slowConsumerLingerMs'>,
  ) {
    this.#ws = ws;
    this.#socket = socket;
    this.#writer = writer;
    this.#limits = limits;
  }

  /** True once nothing more is queued or written on this connection. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Who ended the connection: the relay (close, terminate) or else the client. */
  get closedBy(): 'relay' | 'client' {
    return this.#relayClosed ? 'relay' : 'client';
  }

  /** The close code the relay (or ws on its behalf) sent, if any. */
  get sentCode(): number | undefined {
    return this.#sentCode;
  }

  close(code: number, reason: string): void {
    if (this.#closed) return;
    // What was queued before the close goes out before the close frame.
    this.#writer.flushQueued();
    if (this.#closed) return; // the flush found the buffer past its limit and closed already
    this.stopWriting();
    this.#relayClosed = true;
    this.#sentCode = code;
    this.#ws.close(code, reason);
  }

  /**
   * Closes for a limit: nothing more is read or written, what waits for the socket is dropped, the
   * close frame follows the write in flight, and the socket is destroyed after the grace if the
   * client has not read that far (it then sees 1006, though the relay decided `code`).
   */
  forLimit(code: number, reason: string): void {
    if (this.#closed) return;
    // A flood waits in the client's own buffers rather than being read and framed.
    this.#ws.pause();
    this.#closeAfterInFlight(code, reason, this.#limits.closeGraceMs);
  }

  /**
   * Closes a client that does not read (4008): as for a limit, but still read, so that its answer
   * to the close frame ends the connection at once when it reads again, and kept for the longer
   * `slowConsumerLingerMs`.
   */
  slowConsumer(code: number, reason: string): void {
    if (this.#closed) return;
    this.#closeAfterInFlight(code, reason, this.#limits.slowConsumerLingerMs);
  }

  /**
   * ws found a bad client frame and has sent the close frame `code` itself (it then ends our side
   * and keeps reading, dropping what arrives). The socket is not destroyed at once: frames the
   * client sent before it saw the close (a compressing client sends some late, after deflating
   * them) would reach a closed socket and be answered with a TCP reset, and a reset makes the
   * client's kernel drop the close frame it has not read yet, so the client saw 1006 instead of
   * the documented code. It is destroyed after the grace if the client never closes.
   */
  onBadFrame(code: number): void {
    if (this.#closed) return;
    this.stopWriting();
    this.#relayClosed = true;
    this.#sentCode = code;
    this.#terminateAfter(this.#limits.closeGraceMs);
  }

  /** Drops the socket at once. */
  terminate(): void {
    if (!this.#closed) this.#relayClosed = true;
    this.stopWriting();
    this.#ws.terminate();
  }

  /** Nothing more is queued or written on this connection. */
  stopWriting(): void {
    this.#closed = true;
    this.#writer.stop();
  }

  #closeAfterInFlight(code: number, reason: string, graceMs: number): void {
    this.stopWriting();
    this.#relayClosed = true;
    this.#sentCode = code;
    this.#ws.close(code, reason);
    // Our side ends after the close frame (end() flushes what is queued first), so a client that
    // reads sees the code at once instead of waiting for a close handshake.
    this.#socket.end();
    this.#terminateAfter(graceMs);
  }

  #terminateAfter(ms: number): void {
    setTimeout(() => this.terminate(), ms).unref();
  }
}

/** Connections one turn of a heartbeat round serves before it lets the event loop go on. */
export const HEARTBEATS_PER_TURN = 200;

/**
 * One heartbeat period of every connection (protocol.md "Transport"), `HEARTBEATS_PER_TURN` a turn:
 * each costs a ping, a message and a write, and a round over every connection at once held the loop
 * about 50 ms at 900 connections on 2 cores. By hand, not util/turns.ts: a round falls in the walk's
 * window (docs/architecture.md) every other run, and would add a folder to the path it measures. The
 * round is the connections held at its start; a closed one's `heartbeat` does nothing.
 */
export function heartbeatAll(connections: Iterable<{ heartbeat(now: Date): void }>): void {
  const round = [...connections];
  const turn = (from: number) => {
    const now = new Date();
    const to = Math.min(from + HEARTBEATS_PER_TURN, round.length);
    for (let index = from; index < to; index += 1) round[index]!.heartbeat(now);
    if (to < round.length) setImmediate(turn, to);
  };
  turn(0);
}
