/**
 * @module ws/socket-writer
 * One connection's send path below the protocol: complete WebSocket frames, written at once or
 * queued for the relay-wide flush of ws/write-coalescer.ts and then written in one socket write
 * (docs/protocol.md "Write coalescing"). The bytes waiting count toward the connection's buffered
 * bytes, so holding back (relay/held-back.ts) sees them and the wait never grows a queue.
 */
import type { Socket } from 'node:net';
import type { CoalescedWriter, WriteCoalescer } from './write-coalescer.ts';

/** What left through a connection's write path (tests and diagnostics). */
export interface WriteCounts {
  /** Complete WebSocket frames written. */
  frames: number;
  /** Socket writes that carried them. */
  writes: number;
}

export interface SocketWriterOptions {
  /** False once the connection is closing or closed: nothing more is written. */
  canWrite: () => boolean;
  /** Whether the socket's unsent bytes are past the hard limit: the write is refused, `onOverflow` called. */
  overflows: (socketBytes: number) => boolean;
  onOverflow: () => void;
}

export class SocketWriter implements CoalescedWriter {
  readonly counts: WriteCounts = { frames: 0, writes: 0 };
  readonly #socket: Socket;
  readonly #coalescer: WriteCoalescer;
  readonly #options: SocketWriterOptions;
  #queued: Buffer[] = [];
  #queuedBytes = 0;

  constructor(socket: Socket, coalescer: WriteCoalescer, options: SocketWriterOptions) {
    this.#socket = socket;
    this.#coalescer = coalescer;
    this.#options = options;
  }

  /** Bytes written but not yet sent, plus those waiting for the flush. */
  get bufferedBytes(): number {
    return this.#socket.writableLength + this.#queuedBytes;
  }

  /** A stream frame that may wait for the window (the coalescer writes it at the latest then). */
  enqueue(wire: Buffer): void {
    if (this.#queued.length === 0) this.#coalescer.schedule(this);
    this.#queued.push(wire);
    this.#queuedBytes += wire.length;
  }

  /** A frame that must not wait: written now, behind (and in the same write as) anything queued. */
  write(wire: Buffer): void {
    if (this.#queued.length === 0) {
      this.#writeNow(wire, 1);
      return;
    }
    this.#queued.push(wire);
    this.#queuedBytes += wire.length;
    this.flushQueued();
  }

  flushQueued(): void {
    const queued = this.#queued;
    if (queued.length === 0) return;
    const bytes = this.#queuedBytes;
    this.#queued = [];
    this.#queuedBytes = 0;
    this.#writeNow(queued.length === 1 ? queued[0]! : Buffer.concat(queued, bytes), queued.length);
  }

  /** Forgets what is queued (the connection is gone). */
  clear(): void {
    this.#queued = [];
    this.#queuedBytes = 0;
  }

  /** One socket write of `frames` complete frames. */
  #writeNow(wire: Buffer, frames: number): void {
    if (!this.#options.canWrite()) return;
    if (this.#options.overflows(this.#socket.writableLength)) {
      this.#options.onOverflow();
      return;
    }
    this.counts.frames += frames;
    this.counts.writes += 1;
    this.#socket.write(wire);
  }
}
