/**
 * @module ws/connection-close
 * How one client's WebSocket ends, and who ended it: a plain close after what is queued, a close
 * for a limit (nothing more read, the socket destroyed after `closeGraceMs` if the client has not
 * read up to the close frame), a slow-consumer close (the same, but still read, and kept for
 * `slowConsumerLingerMs`), the close ws sends itself on a bad client frame (the same grace), or
 * termination at once. Once closing starts, nothing more is queued or written.
 *
 * A close for a limit drops what waits for the socket (ws/socket-writer.ts), so its close frame
 * follows only the write the kernel is taking, and ends our side after it. The socket then stays
 * half-closed until the client has read that far: a client that stopped reading and reads again
 * seconds later still finds the close frame, and sees the code rather than 1006. It is destroyed
 * only after the grace, which bounds how long a client that never reads holds it (and the bytes of
 * that one write).
 */
import type { Socket } from 'node:net';
import type { WebSocket } from 'ws';
import type { ConnectionLimits } from './connection-context.ts';
import type { SocketWriter } from './socket-writer.ts';

export class ConnectionClose {
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
