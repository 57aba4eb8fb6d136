/**
 * @module relay/streams/slow-consumer
 * A subscriber's defence against its own slow reader (docs/protocol.md "Slow consumers"), kept by
 * every client's session (relay/session/session.ts), whatever its transport. Above the high-water mark, stream messages are held back and
 * only the fact that a stream owes a snapshot is remembered, so a slow client costs a set of stream
 * references, never a growing queue; when its buffer drains, each held stream gets one fresh
 * snapshot. A reader that stays above the mark for too long is dropped by `onTooSlow`.
 */
import type { Frame } from './frame.ts';
import type { AnyStream } from './stream.ts';

export interface SlowReaderLimits {
  /** Send-buffer bytes above which stream messages are held back (conflation). */
  highWaterBytes: number;
  /** Send-buffer bytes that drop the reader at once. */
  maxBufferBytes: number;
  /** How long the buffer may stay above the high-water mark before the reader is dropped. */
  slowConsumerTimeoutMs: number;
}

export class SlowConsumerPolicy {
  readonly #limits: SlowReaderLimits;
  readonly #onTooSlow: () => void;
  /** Streams whose messages were held back while the buffer was full: each owes one snapshot. */
  readonly #owed = new Set<AnyStream>();
  #timer: NodeJS.Timeout | undefined;

  constructor(limits: SlowReaderLimits, onTooSlow: () => void) {
    this.#limits = limits;
    this.#onTooSlow = onTooSlow;
  }

  get active(): boolean {
    return this.#timer !== undefined;
  }

  /** Whether a stream message must be held back rather than written, given the buffered bytes. */
  mustHoldBack(bufferedBytes: number): boolean {
    return this.#timer !== undefined || bufferedBytes > this.#limits.highWaterBytes;
  }

  /** Whether any write would overflow the hard limit. */
  overflows(bufferedBytes: number): boolean {
    return bufferedBytes > this.#limits.maxBufferBytes;
  }

  holdBack(stream: AnyStream): void {
    this.#owed.add(stream);
    if (this.#timer !== undefined) return;
    this.#timer = setTimeout(this.#onTooSlow, this.#limits.slowConsumerTimeoutMs);
    this.#timer.unref();
  }

  /**
   * The buffer drained to `bufferedBytes`: below the high-water mark, holding back ends and the
   * streams that owe a snapshot are returned (in the order they were held back); undefined while
   * still holding back, or when nothing was held back.
   */
  #release(bufferedBytes: number): AnyStream[] | undefined {
    if (this.#timer === undefined || bufferedBytes > this.#limits.highWaterBytes) return undefined;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const owed = [...this.#owed];
    this.#owed.clear();
    return owed;
  }

  /**
   * After a drain to `bufferedBytes`: ends holding back and hands `deliver` one fresh snapshot of
   * each owed stream still subscribed (and with a state). The number of streams that were owed, or
   * undefined while still holding back (or when nothing was held back).
   */
  resendOwed(
    bufferedBytes: number,
    subscriptions: ReadonlyMap<string, AnyStream>,
    deliver: (stream: AnyStream, frame: Frame) => void,
  ): number | undefined {
    const owed = this.#release(bufferedBytes);
    if (owed === undefined) return undefined;
    for (const stream of owed) {
      if (subscriptions.get(stream.key) === stream && stream.hasState)
        deliver(stream, stream.snapshotFrame());
    }
    return owed.length;
  }

  forget(stream: AnyStream): void {
    this.#owed.delete(stream);
  }

  clear(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#owed.clear();
  }
}
