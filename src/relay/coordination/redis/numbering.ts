/**
 * @module relay/coordination/redis/numbering
 * How the lease holder numbers one poll of a cluster-wide stream (docs/cluster.md "Cluster-wide
 * streams"): the next update after the position it continues from, a confirmation when nothing
 * changed, or the snapshot of a new epoch when the stream has no position to continue.
 */

import type { BookDepth } from '../../../../packages/protocol/src/protocol/messages.ts';
import { type Frame, toFrame } from '../../streams/frame.ts';
import { newEpoch } from '../../streams/stream-identity.ts';
import type { TargetStream } from '../codecs.ts';
import { type ClusterCodec, clusterMessage, storedState } from './codecs.ts';
import type { WrittenEntry } from './stream-batch.ts';
import type { LoadedTarget, StreamPosition } from './stream-log.ts';

/** One stream's entry of our own write, with its frame and the state after it. */
export interface OwnEntry<State> extends WrittenEntry {
  frame: Frame | undefined;
  state: State;
}

/** The target as this relay last numbered it under its lease (written, or waiting to be). */
export interface Produced<State> {
  token: number;
  state: State | undefined;
  positions: Map<string, StreamPosition>;
  /** The stored state is in another format than this relay writes: the next write states it whole. */
  restate?: boolean;
}

/** One stream's entry of a poll of `state`, numbered on from `produced`. */
export function numberPoll<State, Delta>(
  codec: ClusterCodec<State, Delta>,
  streamOf: { market: string; depth: BookDepth | undefined },
  stream: TargetStream,
  produced: Produced<State>,
  state: State,
  times: { ts: string; rts: string },
): OwnEntry<State> {
  const next = codec.project(state, stream.depth);
  const previous = produced.positions.get(stream.field);
  const prevState = produced.state === undefined ? undefined : codec.project(produced.state, stream.depth);
  const delta = previous === undefined || prevState === undefined ? undefined : codec.diff(prevState, next);
  if (delta === null)
    return {
      stream: stream.field,
      ...previous!,
      kind: 'confirm',
      text: undefined,
      frame: undefined,
      state: next,
    };
  const [kind, position, data] =
    previous === undefined || delta === undefined
      ? (['reset', { epoch: newEpoch(), seq: 1 }, next] as const)
      : (['update', { epoch: previous.epoch, seq: previous.seq + 1 }, delta] as const);
  const type = kind === 'reset' ? 'snapshot' : 'update';
  const frame = toFrame(clusterMessage(codec, streamOf, type, position, times, data, next));
  return { stream: stream.field, ...position, kind, text: frame.text, frame, state: next };
}

/** Where a holder continues from what the log holds under its new `token`. */
export function producedFrom<State, Delta>(
  codec: ClusterCodec<State, Delta>,
  loaded: LoadedTarget,
  token: number,
): Produced<State> {
  const stored = loaded.stored;
  const state = stored === undefined ? undefined : storedState(codec, stored);
  // No state (never written, expired, unreadable): every stream starts a new epoch.
  if (stored === undefined || state === undefined) return { token, state: undefined, positions: new Map() };
  return { token, state, positions: new Map(stored.positions), restate: !stored.ownFormat };
}
