/**
 * @module observability/log-sink
 * Where the relay's log lines go (stdout), such that logging can never stop the relay: a
 * destination that is full or slow (a stalled log shipper, a pipe nobody reads) costs lines, not the
 * event loop, and one that is gone (its reader closed the pipe) costs every line after. Lines are
 * written asynchronously (Node writes a pipe through the event loop); while more than
 * `maxBufferBytes` wait, new lines are dropped and counted, and when the destination takes lines
 * again one line on stderr says how many were lost. pino's own default destination writes
 * synchronously and, on a full non-blocking pipe, sleeps and retries in the main thread: the relay
 * then answers nothing and ignores SIGTERM.
 */
import type { Writable } from 'node:stream';
import pino, { type Logger } from 'pino';

/** Log bytes that may wait for a slow destination before lines are dropped. */
export const LOG_BUFFER_BYTES = 1024 * 1024;

export class LogSink {
  readonly #stream: Writable;
  readonly #notice: (text: string) => void;
  readonly #maxBufferBytes: number;
  #gone = false;
  /** Dropped since the last notice. */
  #unreported = 0;
  #dropped = 0;

  constructor(stream: Writable, options: { maxBufferBytes?: number; notice?: (text: string) => void } = {}) {
    this.#stream = stream;
    this.#maxBufferBytes = options.maxBufferBytes ?? LOG_BUFFER_BYTES;
    this.#notice = options.notice ?? ((text) => process.stderr.write(text));
    // EPIPE and the like: the reader is gone for good. Without a listener the error would crash us.
    stream.on('error', () => {
      this.#gone = true;
    });
    stream.on('drain', () => this.#report());
  }

  /** Log lines dropped since start (a full, slow or gone destination). */
  get droppedLines(): number {
    return this.#dropped;
  }

  write(line: string): void {
    if (this.#gone || this.#stream.destroyed || this.#stream.writableLength > this.#maxBufferBytes) {
      this.#unreported += 1;
      this.#dropped += 1;
      return;
    }
    this.#report();
    this.#stream.write(line);
  }

  #report(): void {
    if (this.#unreported === 0 || this.#gone) return;
    const lost = this.#unreported;
    this.#unreported = 0;
    this.#notice(
      `market-relay: ${lost} log line${lost === 1 ? '' : 's'} dropped: the log destination was full or slow\n`,
    );
  }
}

/** The relay's pino logger over a LogSink on stdout. */
export function createLogger(
  level: string,
  sink = new LogSink(process.stdout),
): { logger: Logger; sink: LogSink } {
  return { logger: pino({ level }, sink), sink };
}
