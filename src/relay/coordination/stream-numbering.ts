/**
 * @module relay/coordination/stream-numbering
 * How the streams of one poll target get their numbers (epoch, `seq`): one interface, implemented
 * by a relay alone, which numbers its own streams (relay/coordination/local/broker.ts), and by a relay
 * in cluster mode, where the lease holder numbers them once for the cluster and writes them to the
 * stream log (relay/coordination/redis/target-streams.ts). A target hands every poll it applies to `produce`
 * and upstream's "no such market" to `close`, whichever implementation it was given.
 */
import type { TraceSpan } from '../../util/tracing.ts';
import type { Frame } from '../streams/frame.ts';
import type { StreamPublisher } from '../streams/publisher.ts';
import type { RecordedSubject } from '../streams/recorded.ts';
import type { StreamRegistry } from '../streams/registry.ts';
import type { Stream } from '../streams/stream.ts';
import type { StreamChange } from '../streams/stream-identity.ts';

/**
 * Takes each message the cluster's lease holder numbers, at once and without waiting: with a
 * history store the cluster shares, the holder records for all (history/recorder.ts buffers it).
 */
export type NumberedRecordSink = (
  subject: RecordedSubject,
  frame: Frame,
  kind: 'snapshot' | 'update',
) => void;

/** What a numbering serves this relay's streams through. */
export interface NumberingContext {
  registry: StreamRegistry;
  publisher: StreamPublisher;
  now: () => number;
  /** Upstream no longer has the market (the lease holder said so). */
  closeMarket(): void;
}

/** What a poll (ours, or the cluster's lease holder's) did to the target's streams here. */
export interface AppliedPoll {
  receivedAt: number;
  /** Some stream changed. */
  changed: boolean;
  /** Some stream here got its first state (or a new epoch). */
  first: boolean;
}

/** When one poll was asked and answered, and upstream's time of its data. */
export interface PollTimes {
  /** When the request was asked: a relay alone drops a response older than the last one it numbered. */
  askedAt: number;
  ts: string;
  rts: string;
  receivedAt: number;
  /** The poll's span when it is traced: numbering, publishing and fan-out are spans inside it. */
  trace?: TraceSpan | undefined;
}

/** One of this relay's streams of a target, with the change its channel made of a poll. */
export interface ChangeHere<State, Delta> {
  readonly stream: Stream<State, Delta>;
  readonly change: StreamChange<State, Delta>;
}

/**
 * One poll of a target as its channel made it ready for numbering: the target's whole state, for a
 * numbering that keeps it (`keepsWholeState`: the cluster's numbers every stream of the target
 * from it), else this relay's streams of the target, each with its change made (a relay alone
 * numbers and serves them as they are, calling nothing of the channel back).
 */
export type PolledState<State, Delta> =
  | { readonly whole: State }
  | { readonly here: readonly ChangeHere<State, Delta>[] };

export interface StreamNumbering<State, Delta = unknown> {
  /**
   * Whether `produce` wants the target's whole state (`{ whole }`) rather than this relay's
   * streams' changes (`{ here }`): the cluster's numbering stores it for the next lease holder, and
   * the response is shared with the other relays. A target may read less of a response when this
   * is false.
   */
  readonly keepsWholeState: boolean;
  /**
   * Numbers one poll for every stream of the target and serves it to this relay's streams.
   * Undefined when nothing was served: no stream here (a relay alone), a response older than one
   * already numbered, or the lease is no longer ours. Throws when handed the form of the poll it
   * does not take (see `keepsWholeState`).
   */
  produce(poll: PolledState<State, Delta>, times: PollTimes): Promise<AppliedPoll | undefined>;
  /** Upstream has no such market: true when its streams are to end (false: the lease is no longer ours). */
  close(): Promise<boolean>;
}
