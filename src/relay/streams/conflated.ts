/**
 * @module relay/streams/conflated
 * What a paced group (./paced.ts) is sent: the change from the state it was last sent to the
 * stream's current one, as one `update` naming that state's `seq` as `prev_seq` (docs/protocol.md
 * "Per-subscription options"), built with the channel's own diff, so its checksum and the state a
 * client rebuilds are the ones every subscriber of the stream has.
 */
import { type StreamCodec, sendWhole } from '../channels/codecs.ts';
import { type Frame, toFrame } from './frame.ts';
import type { PacedState } from './paced.ts';
import { dataMessage, type MessagePosition, type MessageSubject } from './stream-messages.ts';

/** The stream's current state and where it stands. */
export interface CurrentState<State> extends MessagePosition {
  readonly state: State;
}

/**
 * The update from `sent` to `current`, or the snapshot where none can say it: another epoch, a
 * codec that sends this change whole, a change back to the same content, or an update larger than
 * the snapshot where the codec forbids that.
 */
export function conflatedFrame<State, Delta>(
  subject: MessageSubject,
  codec: StreamCodec<State, Delta>,
  sent: PacedState,
  current: CurrentState<State>,
  snapshot: () => Frame,
): Frame {
  if (sent.epoch !== current.epoch || sent.seq >= current.seq || sent.state === undefined) return snapshot();
  const delta = codec.diff(sent.state as State, current.state);
  if (delta === null || delta === sendWhole) return snapshot();
  const update = toFrame(
    dataMessage(subject, 'update', delta, current, codec.checksum?.(current.state), sent.seq),
  );
  if (codec.noUpdateLargerThanSnapshot === true && update.bytes.length > snapshot().bytes.length)
    return snapshot();
  return update;
}
