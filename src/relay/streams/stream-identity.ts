/**
 * @module relay/streams/stream-identity
 * What names a stream and a place in it: its identity (channel, stream id, book depth and group), a new
 * epoch, an update with its `seq`, and what publishing a state gave. Read by the stream, the
 * registry, the session and the cluster's numbering alike.
 */
import { randomBytes } from 'node:crypto';
import type { BookDepth, Channel } from '../../../packages/protocol/src/protocol/messages.ts';
import type { sendWhole } from '../channels/codecs.ts';
import type { Frame } from './frame.ts';

export interface StreamIdentity<C extends Channel = Channel> {
  channel: C;
  market: string;
  /** `book` only. */
  depth?: BookDepth;
  /** A grouped `book` stream only: its group step (docs/protocol.md "Grouped books"). */
  group?: string;
}

export function newEpoch(): string {
  return randomBytes(6).toString('base64url');
}

/** An update with its place in the stream (as the cluster's history gives them). */
export interface SequencedFrame {
  seq: number;
  frame: Frame;
}

export interface PublishResult {
  /** The update or snapshot sent, or null when the poll changed nothing. */
  frame: Frame | null;
  seq: number;
  /** What `frame` is: the first state and a state sent whole are snapshots. */
  kind: 'snapshot' | 'update';
}

/**
 * A poll's state for one stream and what it changes there, made by the stream's channel from the
 * state the stream holds (`Stream.state`) before numbering, so that nothing below the channel calls
 * back into it: `delta` null when nothing changed, `sendWhole` when the channel sends such a state
 * whole, undefined when the stream held no state; `checksum` that of `state`, for a channel whose
 * messages carry one (unused when nothing changed).
 */
export interface StreamChange<State, Delta> {
  readonly state: State;
  readonly delta: Delta | typeof sendWhole | null | undefined;
  readonly checksum: number | undefined;
}
