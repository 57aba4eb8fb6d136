/**
 * @module relay/session/sent-positions
 * Where each stream a session holds stood in the last `snapshot` or `update` written to it: what
 * `list` reports as the stream's `seq`, what an `update` of its options compares, and what a paced
 * group's conflated update (docs/protocol.md "Per-subscription options") must apply to.
 */
import type { Frame, StreamPosition } from '../streams/frame.ts';
import type { AnyStream } from '../streams/stream.ts';

/** By stream key. */
export class SentPositions extends Map<string, StreamPosition> {
  /**
   * The frame to write of a conflated update `frame`, which applies to `basis` (the session writes any other as it is, and
   * sets the position it was sent). A conflated update applies to the state it names: a member sent
   * another (it joined the group since, or was held back meanwhile) gets the current snapshot
   * instead, or nothing when it was already sent the state the update leads to.
   */
  frameFor(stream: AnyStream, frame: Frame, basis: StreamPosition): Frame | undefined {
    const last = this.get(stream.key);
    if (last !== undefined && samePosition(last, basis)) return frame;
    return last !== undefined && samePosition(last, frame.position) ? undefined : stream.snapshotFrame();
  }
}

function samePosition(a: StreamPosition, b: StreamPosition | undefined): boolean {
  return a.seq === b?.seq && a.epoch === b.epoch;
}
