/**
 * @module ws/write-coalescer
 * One relay-wide flush for every connection with frames waiting (protocol.md "Write coalescing").
 * Book polls return one market at a time, so a client watching ten books would otherwise get ten
 * socket writes per poll cycle; a connection instead queues the frames that become ready within
 * `windowMs` and writes them in one go. One timer serves all connections (not one per connection):
 * the first frame queued anywhere starts it, and when it fires every waiting connection writes once.
 */

/** A connection holding frames for the next flush. */
export interface CoalescedWriter {
  /** Writes everything queued since the last flush in one socket write. */
  flushQueued(): void;
}

export class WriteCoalescer {
  /** 0: no coalescing, every frame is written when it is ready. */
  readonly windowMs: number;
  #waiting: CoalescedWriter[] = [];
  #timer: NodeJS.Timeout | undefined;

  constructor(windowMs: number) {
    if (!Number.isInteger(windowMs) || windowMs < 0)
      throw new RangeError(`bad coalescing window ${windowMs}`);
    this.windowMs = windowMs;
  }

  /**
   * `writer` has just queued its first frame since its last flush: it is written at the latest
   * `windowMs` from the first frame queued by any connection. Call once per flush per writer; a
   * writer that flushed early on its own may be scheduled again within the window (flushing one
   * with nothing queued does nothing).
   */
  schedule(writer: CoalescedWriter): void {
    this.#waiting.push(writer);
    if (this.#timer !== undefined) return;
    this.#timer = setTimeout(this.#flush, this.windowMs);
    // A few milliseconds of queued frames must not keep a stopping process alive.
    this.#timer.unref();
  }

  /** Writes everything queued now (shutdown); later frames start a new window. */
  flushNow(): void {
    clearTimeout(this.#timer);
    this.#flush();
  }

  readonly #flush = (): void => {
    this.#timer = undefined;
    const waiting = this.#waiting;
    this.#waiting = [];
    for (const writer of waiting) writer.flushQueued();
  };
}
