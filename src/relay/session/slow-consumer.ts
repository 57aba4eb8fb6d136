/**
 * @module relay/session/slow-consumer
 * A subscriber's defence against its own slow reader (docs/protocol.md "Slow consumers and
 * conflation"), kept by every client's session (./session.ts), whatever its transport: what a
 * session does with a stream message before it writes, read once per delivery. Above the
 * high-water mark, stream messages are held back and only the fact that a stream owes a snapshot is
 * remembered, so a slow client costs a set of stream references, never a growing queue; when its
 * buffer drains, each held stream gets one fresh snapshot (the latest state, never a queue of the
 * changes before it). A reader that stays above the mark for too long is dropped by `onTooSlow`.
 */
import type { Frame } from '../streams/frame.ts';

export interface SlowReaderLimits {
  /** Send-buffer bytes above which stream messages are held back (conflation). */
  highWaterBytes: number;
  /** Send-buffer bytes that drop the reader at once. */
  maxBufferBytes: number;
  /** How long the buffer may stay above the high-water mark before the reader is dropped. */
  slowConsumerTimeoutMs: number;
}

/** What the policy needs of a stream held back (a relay/streams/stream.ts Stream). */
export interface OwedStream {
  readonly key: string;
  readonly hasState: boolean;
  snapshotFrame(): Frame;
}

/** Whom holding back tells that it waits on the reader's drains (the session's transport). */
export interface DrainWaits {
  wantDrains?(wanted: boolean): void;
}

export class SlowConsumerPolicy<Owed extends OwedStream> {
  readonly #limits: SlowReaderLimits;
  readonly #drains: DrainWaits;
  readonly #onTooSlow: () => void;
  /** Streams whose messages were held back while the buffer was full: each owes one snapshot. */
  readonly #owed = new Set<Owed>();
  #timer: NodeJS.Timeout | undefined;

  /** `drains`: told when holding back starts and ends, as only then does a drain matter here. */
  constructor(limits: SlowReaderLimits, drains: DrainWaits, onTooSlow: () => void) {
    this.#limits = limits;
    this.#drains = drains;
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

  holdBack(stream: Owed): void {
    this.#owed.add(stream);
    if (this.#timer !== undefined) return;
    this.#timer = setTimeout(this.#onTooSlow, this.#limits.slowConsumerTimeoutMs);
    this.#timer.unref();
    this.#drains.wantDrains?.(true);
  }

  /**
   * The buffer drained to `bufferedBytes`: below the high-water mark, holding back ends and the
   * streams that owe a snapshot are returned (in the order they were held back); undefined while
   * still holding back, or when nothing was held back.
   */
  #release(bufferedBytes: number): Owed[] | undefined {
    if (this.#timer === undefined || bufferedBytes > this.#limits.highWaterBytes) return undefined;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#drains.wantDrains?.(false);
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
    subscriptions: ReadonlyMap<string, Owed>,
    deliver: (stream: Owed, frame: Frame) => void,
  ): number | undefined {
    const owed = this.#release(bufferedBytes);
    if (owed === undefined) return undefined;
    for (const stream of owed) {
      if (subscriptions.get(stream.key) === stream && stream.hasState)
        deliver(stream, stream.snapshotFrame());
    }
    return owed.length;
  }

  forget(stream: Owed): void {
    this.#owed.delete(stream);
  }

  clear(): void {
    if (this.#timer !== undefined) this.#drains.wantDrains?.(false);
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#owed.clear();
  }
}
