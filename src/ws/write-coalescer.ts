/**
 * @module ws/write-coalescer
 * One relay-wide flush for every connection with frames waiting (protocol.md "Write coalescing").
 * Book polls return one market at a time, so a client watching ten books would otherwise get ten
 * socket writes per poll cycle. A connection instead queues its stream frames, and every waiting
 * connection writes once at the end of the event-loop turn (`setImmediate`): what is coalesced is
 * only what became ready while the relay was already busy, so an idle relay adds no wait (a frame
 * leaves as soon as its poll's whole fan-out is queued), and a loaded one, whose turns handle many
 * upstream responses each, combines more frames per write the busier it is. One immediate serves
 * all connections (not one per connection).
 */

/** A connection holding frames for the next flush. */
export interface CoalescedWriter {
  /** Writes everything queued since the last flush in one socket write. */
  flushQueued(): void;
}

export class WriteCoalescer {
  /** False: no coalescing, every frame is written when it is ready. */
  readonly enabled: boolean;
  #waiting: CoalescedWriter[] = [];
  #immediate: NodeJS.Immediate | undefined;

  constructor(enabled: boolean) {
    this.enabled = enabled;
  }

  /**
   * `writer` has just queued its first frame since its last flush: it is written at the end of this
   * turn. Call once per flush per writer; a writer that flushed early on its own may be scheduled
   * again in the same turn (flushing one with nothing queued does nothing).
   */
  schedule(writer: CoalescedWriter): void {
    this.#waiting.push(writer);
    if (this.#immediate !== undefined) return;
    this.#immediate = setImmediate(this.#flush);
    // Queued frames must not keep a stopping process alive.
    this.#immediate.unref();
  }

  /** Writes everything queued now (shutdown). */
  flushNow(): void {
    clearImmediate(this.#immediate);
    this.#flush();
  }

  readonly #flush = (): void => {
    this.#immediate = undefined;
    const waiting = this.#waiting;
    this.#waiting = [];
    for (const writer of waiting) writer.flushQueued();
  };
}
