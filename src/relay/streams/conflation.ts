/**
 * @module relay/streams/conflation
 * What a subscriber is sent in place of every message (docs/protocol.md "Slow consumers and
 * conflation", "Per-subscription options"): the latest state, never a queue of the changes before it.
 *
 * A subscriber's defence against its own slow reader (`SlowConsumerPolicy`), kept by every client's
 * session (relay/session/session.ts), whatever its transport. Above the high-water mark, stream
 * messages are held back and only the fact that a stream owes a snapshot is remembered, so a slow
 * client costs a set of stream references, never a growing queue; when its buffer drains, each held
 * stream gets one fresh snapshot. A reader that stays above the mark for too long is dropped by
 * `onTooSlow`.
 *
 * What a paced group (./paced.ts) is sent (`ConflatedFrames`): the change from the state it was
 * last sent to the stream's current one, as one `update` naming that state's `seq` as `prev_seq`,
 * built with the channel's own diff, so its checksum and the state a client rebuilds are the ones
 * every subscriber of the stream has.
 */
import { type StreamCodec, sendWhole } from '../channels/codecs.ts';
import { dataMessage, type Frame, type MessagePosition, type MessageSubject, toFrame } from './frame.ts';
import type { PacedState } from './paced.ts';

export interface SlowReaderLimits {
  /** Send-buffer bytes above which stream messages are held back (conflation). */
  highWaterBytes: number;
  /** Send-buffer bytes that drop the reader at once. */
  maxBufferBytes: number;
  /** How long the buffer may stay above the high-water mark before the reader is dropped. */
  slowConsumerTimeoutMs: number;
}

/** What the policy needs of a stream held back: a ./stream.ts Stream, named so here as stream.ts imports this file. */
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

/** The stream's current state and where it stands. */
export interface CurrentState<State> extends MessagePosition {
  readonly state: State;
}

/** One stream's frames for its paced groups. */
export class ConflatedFrames<State, Delta> {
  readonly #subject: MessageSubject & { readonly idsArePaths: boolean };
  readonly #codec: StreamCodec<State, Delta>;
  /** The stream's last ordinary update, and the same bytes marked as applying to the seq before it. */
  #lastUpdate: Frame | undefined;
  #lastUpdateForGroups: Frame | undefined;

  constructor(subject: MessageSubject & { readonly idsArePaths: boolean }, codec: StreamCodec<State, Delta>) {
    this.#subject = subject;
    this.#codec = codec;
  }

  /** The stream sent `frame` to its raw subscribers (an update) or started over (anything else). */
  published(frame: Frame | undefined): void {
    this.#lastUpdate = frame;
    this.#lastUpdateForGroups = undefined;
  }

  /**
   * The update from `sent` to `current`. A group one change behind gets the stream's own update
   * (its bytes, no diff or serialising again: without `prev_seq` it applies to the seq before it).
   * The snapshot where no update can say the change (another epoch, a codec that sends this
   * change whole, a change back to the same content) or where it is the smaller message.
   */
  changeSince(sent: PacedState, current: CurrentState<State>, snapshot: () => Frame): Frame {
    if (sent.epoch !== current.epoch || sent.seq >= current.seq || sent.state === undefined)
      return snapshot();
    const last = this.#lastUpdate;
    if (
      sent.seq === current.seq - 1 &&
      last?.position?.seq === current.seq &&
      last.position.epoch === current.epoch
    ) {
      this.#lastUpdateForGroups ??= last.applyingTo({ epoch: sent.epoch, seq: sent.seq });
      return this.#lastUpdateForGroups;
    }
    const delta = this.#codec.diff(sent.state as State, current.state);
    if (delta === null || delta === sendWhole) return snapshot();
    const message = dataMessage(
      this.#subject,
      'update',
      delta,
      current,
      this.#codec.checksum?.(current.state),
      sent.seq,
    );
    const update = toFrame(message, this.#subject.idsArePaths);
    // Whichever is smaller: a member can always apply a snapshot, and a second of a busy book can
    // change more levels than it has.
    return update.bytes.length > snapshot().bytes.length ? snapshot() : update;
  }
}
