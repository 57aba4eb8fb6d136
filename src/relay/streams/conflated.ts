/**
 * @module relay/streams/conflated
 * What a paced group (./paced.ts) is sent: the change from the state it was last sent to the
 * stream's current one, as one `update` naming that state's `seq` as `prev_seq` (docs/protocol.md
 * "Per-subscription options"), built with the channel's own diff, so its checksum and the state a
 * client rebuilds are the ones every subscriber of the stream has.
 */
import { type StreamCodec, sendWhole } from '../channels/codecs.ts';
import { dataMessage, type Frame, type MessagePosition, type MessageSubject, toFrame } from './frame.ts';
import type { PacedState } from './paced.ts';

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
