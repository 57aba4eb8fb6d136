/**
 * @module ws/write-coalescer
 * The relay-wide flushes for every connection with frames waiting (protocol.md "Write coalescing").
 * Book polls return one market at a time, so a client watching ten books would otherwise get ten
 * socket writes per poll cycle. A connection instead queues its stream frames, and how long they
 * wait depends on how busy it is:
 *
 * - A quiet connection (no held frames written within the last window) writes once at the end of
 *   the event-loop turn (`setImmediate`): what is coalesced is only what became ready while the
 *   relay was already busy, so a frame leaves as soon as its poll's whole fan-out is queued.
 * - A busy one (it wrote held frames less than a window ago) waits until a window after that
 *   write, so it writes at most about once a window however many responses arrive in between: a
 *   socket write costs the same CPU for one small frame as for ten, and on a machine whose
 *   processes sleep between wake-ups most of it is the wake-up of the reader's side. The wait ends
 *   early once the frames held reach HELD_BYTES_FLUSH (the connection's writer sees to it).
 *
 * One immediate serves every quiet connection and one timer every busy one (none per connection).
 * The window's end is the earliest any busy connection is due; all of them are written then, so a
 * connection never waits longer than its own window and the busy ones fall into step.
 */
import { performance } from 'node:perf_hooks';

/** Frames held past this many bytes leave at once: a write this large gains nothing by waiting. */
export const HELD_BYTES_FLUSH = 64 * 1024;

/** A connection holding frames for a flush. */
export interface CoalescedWriter {
  /** Writes everything queued since the last flush in one socket write. */
  flushQueued(): void;
}

export class WriteCoalescer {
  /** False: no coalescing, every frame is written when it is ready. */
  readonly enabled: boolean;
  readonly #windowMs: number;
  readonly #now: () => number;
  #endOfTurn: CoalescedWriter[] = [];
  #immediate: NodeJS.Immediate | undefined;
  #endOfWindow: CoalescedWriter[] = [];
  #timer: NodeJS.Timeout | undefined;
  #windowEndsAt = Number.POSITIVE_INFINITY;
  /** While a flush runs: when it started, the time every writer it flushes records. */
  #flushingSince: number | undefined;

  /** `windowMs` 0 turns coalescing off; `now` is a monotonic clock in ms (tests pass their own). */
  constructor(windowMs: number, now: () => number = () => performance.now()) {
    this.enabled = windowMs > 0;
    this.#windowMs = windowMs;
    this.#now = now;
  }

  /**
   * When a writer flushing now wrote: a flush's start for every writer it flushes (one clock read
   * per flush), the time now for a writer that flushed on its own.
   */
  flushedAt(): number {
    return this.#flushingSince ?? this.#now();
  }

  /**
   * `writer` has just queued its first frame since its last flush, which it made at `lastFlushAt`
   * (`flushedAt()` then; minus infinity if never): it is written at the end of this turn, or at the
   * end of its window while that is still open. Call once per flush per writer; a writer that
   * flushed early on its own may be scheduled again (flushing one with nothing queued does nothing).
   */
  schedule(writer: CoalescedWriter, lastFlushAt: number): void {
    const now = this.#now();
    const windowEndsAt = lastFlushAt + this.#windowMs;
    if (windowEndsAt <= now) {
      this.#endOfTurn.push(writer);
      if (this.#immediate !== undefined) return;
      this.#immediate = setImmediate(this.#flushTurn);
      // Queued frames must not keep a stopping process alive.
      this.#immediate.unref();
      return;
    }
    this.#endOfWindow.push(writer);
    if (windowEndsAt >= this.#windowEndsAt) return;
    clearTimeout(this.#timer);
    this.#windowEndsAt = windowEndsAt;
    this.#timer = setTimeout(this.#flushWindow, Math.max(1, Math.ceil(windowEndsAt - now)));
    this.#timer.unref();
  }

  /** Writes everything queued now (shutdown). */
  flushNow(): void {
    clearImmediate(this.#immediate);
    this.#flushTurn();
    clearTimeout(this.#timer);
    this.#flushWindow();
  }

  readonly #flushTurn = (): void => {
    this.#immediate = undefined;
    const waiting = this.#endOfTurn;
    this.#endOfTurn = [];
    this.#flush(waiting);
  };

  readonly #flushWindow = (): void => {
    this.#timer = undefined;
    this.#windowEndsAt = Number.POSITIVE_INFINITY;
    const waiting = this.#endOfWindow;
    this.#endOfWindow = [];
    this.#flush(waiting);
  };

  #flush(waiting: readonly CoalescedWriter[]): void {
    if (waiting.length === 0) return;
    this.#flushingSince = this.#now();
    try {
      for (const writer of waiting) writer.flushQueued();
    } finally {
      this.#flushingSince = undefined;
    }
  }
}
