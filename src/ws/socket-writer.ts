/**
 * @module ws/socket-writer
 * One connection's send path below the protocol: complete WebSocket frames, written at once or
 * queued for a relay-wide flush of ws/write-coalescer.ts (at the end of the event-loop turn, or of
 * the connection's window while it is busy) and then written in one socket write
 * (docs/protocol.md "Write coalescing"). The bytes waiting count toward the connection's buffered
 * bytes, so holding back (relay/session/slow-consumer.ts) sees them and the wait never grows a queue.
 *
 * While the kernel has not taken a write yet, what the relay writes waits here (the backlog) and
 * leaves in one write when it has. So Node's own buffer never holds
 * the relay's frames, and a close for a limit drops the backlog and puts the close frame behind only
 * what the kernel is already taking (docs/protocol.md "Slow consumers": the client sees 4008 when it
 * reads again). The writer also says when everything has left (`onDrained`, while something waits
 * on it), which ends holding back: the socket's 'drain' event only follows a write that filled
 * Node's buffer, so a connection held back for bytes waiting in the coalescing queue was never
 * released and was closed 4008 while reading at full speed.
 *
 * This is the per-delivery path of the fan-out: with one stream per client a poll's frame costs one
 * call here per subscriber, so everything it reads lives on this object, the socket and the
 * WebSocket (no closures, no counters elsewhere), and nothing is allocated besides the socket write.
 */
import type { Socket } from 'node:net';
import { WebSocket } from 'ws';
import type { Frame, WireForm } from '../relay/streams/frame.ts';
import { type CoalescedWriter, HELD_BYTES_FLUSH, type WriteCoalescer } from './write-coalescer.ts';

/**
 * How a connection of `form` picks its bytes of each stream message: the frame as built, for
 * plain JSON; the deflated form the stream made before handing the frame down (it does for every
 * subscriber that compresses), or else made now and kept by the frame; a compact form as the frame
 * makes it (the number is the stream's on this relay).
 */
export function wireOfForm(form: WireForm): (frame: Frame, stream: number) => Buffer {
  if (form.encoding === 'compact') return (frame, stream) => frame.wireFor(form, stream);
  if (form.deflate) return (frame) => frame.deflated ?? frame.deflate();
  return (frame) => frame.wire;
}

/** What left through a connection's write path (tests and diagnostics). */
export interface WriteCounts {
  /** Complete WebSocket frames written. */
  frames: number;
  /** Socket writes that carried them. */
  writes: number;
}

export interface SocketWriterOptions {
  /** Its hard limit: a write with the socket's unsent bytes past it is refused, `onOverflow` called. */
  maxBufferBytes: number;
  onOverflow: () => void;
  /** Everything written has left for the kernel (no write in flight, nothing waiting). */
  onDrained: () => void;
  /**
   * The session's high-water mark (relay/session/slow-consumer.ts), which held bytes count toward:
   * frames held reaching it (or HELD_BYTES_FLUSH, the lower) are written at once, so that the
   * coalescer's wait alone never puts a client reading at full speed into holding back.
   */
  highWaterBytes: number;
}

/** Written behind a write Node still holds, to be called back once that write has left. */
const NOTHING = Buffer.alloc(0);

export class SocketWriter implements CoalescedWriter {
  readonly #ws: WebSocket;
  readonly #socket: Socket;
  readonly #coalescer: WriteCoalescer;
  readonly #maxBufferBytes: number;
  readonly #onOverflow: () => void;
  readonly #onDrained: () => void;
  readonly #flushHeldAtBytes: number;
  #queued: Buffer[] = [];
  /** Frames written while a socket write was in flight, and their bytes. */
  #backlog: Buffer[] = [];
  #backlogBytes = 0;
  /** Writes of this writer whose callback has not come yet (a write the kernel took at once has none). */
  #pendingWrites = 0;
  /** Zero exactly when nothing is queued (a frame is never empty). */
  #queuedBytes = 0;
  /** When queued frames were last written (the coalescer's clock): a busy connection's window. */
  #lastFlushAt = Number.NEGATIVE_INFINITY;
  #frames = 0;
  #writes = 0;
  #stopped = false;
  /** What waits on `onDrained` (the session holding back, its replays): with nothing, no one is told. */
  drainWaiters = 0;

  constructor(ws: WebSocket, socket: Socket, coalescer: WriteCoalescer, options: SocketWriterOptions) {
    this.#ws = ws;
    this.#socket = socket;
    this.#coalescer = coalescer;
    this.#maxBufferBytes = options.maxBufferBytes;
    this.#onOverflow = options.onOverflow;
    this.#onDrained = options.onDrained;
    this.#flushHeldAtBytes = Math.min(HELD_BYTES_FLUSH, options.highWaterBytes);
  }

  /** True once `stop` was called: nothing more is written. */
  get stopped(): boolean {
    return this.#stopped;
  }

  get counts(): WriteCounts {
    return { frames: this.#frames, writes: this.#writes };
  }

  /** Bytes written but not yet sent (Node's buffer and the backlog), plus those waiting for the flush. */
  get bufferedBytes(): number {
    return this.#socket.writableLength + this.#backlogBytes + this.#queuedBytes;
  }

  /** A stream frame that may wait for the coalescer's flush (not past the held-bytes bound). */
  enqueue(wire: Buffer): void {
    if (this.#queuedBytes === 0) this.#coalescer.schedule(this, this.#lastFlushAt);
    this.#queued.push(wire);
    this.#queuedBytes += wire.length;
    if (this.#queuedBytes >= this.#flushHeldAtBytes) this.flushQueued();
  }

  /** A frame that must not wait: written now, behind (and in the same write as) anything queued. */
  write(wire: Buffer): void {
    if (this.#queuedBytes === 0) {
      this.#writeNow(wire, 1);
      return;
    }
    this.#queued.push(wire);
    this.#queuedBytes += wire.length;
    this.flushQueued();
  }

  flushQueued(): void {
    if (this.#queuedBytes === 0) return;
    const queued = this.#queued;
    const bytes = this.#queuedBytes;
    this.#queued = [];
    this.#queuedBytes = 0;
    this.#lastFlushAt = this.#coalescer.flushedAt();
    this.#writeNow(queued.length === 1 ? queued[0]! : Buffer.concat(queued, bytes), queued.length);
  }

  /**
   * Nothing more is written: the connection is closing (its close frame follows what was written)
   * or gone. What is still queued is forgotten.
   */
  stop(): void {
    this.#stopped = true;
    this.#queued = [];
    this.#queuedBytes = 0;
    this.#backlog = [];
    this.#backlogBytes = 0;
  }

  /** `frames` complete frames: one socket write now, or into the backlog behind the one in flight. */
  #writeNow(wire: Buffer, frames: number): void {
    // ws moves to CLOSING when the client's close frame arrives: no data may follow ws's reply to it.
    if (this.#stopped || this.#ws.readyState !== WebSocket.OPEN) return;
    const unsent = this.#socket.writableLength;
    if (unsent + this.#backlogBytes > this.#maxBufferBytes) {
      this.#onOverflow();
      return;
    }
    this.#frames += frames;
    // A write of ours that the kernel has not taken yet (Node still holds its bytes) is in flight.
    if (this.#backlogBytes > 0 || (this.#pendingWrites > 0 && unsent > 0)) {
      this.#backlog.push(wire);
      this.#backlogBytes += wire.length;
      return;
    }
    this.#send(wire);
  }

  #send(wire: Buffer): void {
    this.#writes += 1;
    if (this.drainWaiters > 0) {
      this.#writeCalledBack(wire);
      return;
    }
    // Node queues a tick for a write's callback even when the kernel took the write at once, as it
    // nearly always does: a cost per delivery. So the write goes without one, and only a write that
    // Node still holds afterwards is followed by an empty write, whose callback says when it has left.
    this.#socket.write(wire);
    if (this.#socket.writableLength > 0) this.#writeCalledBack(NOTHING);
  }

  #writeCalledBack(wire: Buffer): void {
    this.#pendingWrites += 1;
    this.#socket.write(wire, this.#written);
  }

  /** A write has left for the kernel (or failed: the socket is then going away). */
  readonly #written = (error?: Error | null): void => {
    this.#pendingWrites -= 1;
    if (error || this.#stopped) return;
    if (this.#backlogBytes > 0) {
      const backlog = this.#backlog;
      const bytes = this.#backlogBytes;
      this.#backlog = [];
      this.#backlogBytes = 0;
      this.#send(backlog.length === 1 ? backlog[0]! : Buffer.concat(backlog, bytes));
      return;
    }
    if (this.drainWaiters > 0) this.#onDrained();
  };
}
