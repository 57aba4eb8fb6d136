/**
 * @module relay/coordination/broker
 * Who polls what, who numbers the streams, where a resume finds history and what gate upstream
 * requests wait at: one interface, as a message broker has an in-memory implementation beside its
 * Redis one. A relay alone (`local/`) holds every lease, numbers its own streams, keeps its history
 * in its own resume rings and keeps to `--upstream-rps` by itself. In cluster mode (`redis/`, one
 * Redis or a Redis Cluster, docs/cluster.md) several relays serve the same markets but upstream is
 * polled once per market: the lease holder polls and numbers each poll once for the cluster, the
 * others follow, and the budget is the cluster's. The poller, the session and the operators' view
 * speak only to this interface; what it says about itself is data, never a mode to branch on.
 */
import type { RateGate } from '../../upstream/rate-gate.ts';
import type { ResumeHistory } from '../streams/registry.ts';
import type { NumberedCodec } from './codecs.ts';
import type { LeaseTable } from './recording/lease-table.ts';
import type { SharedResult } from './shared-result.ts';
import type { AppliedPoll, NumberingContext, StreamNumbering } from './stream-numbering.ts';

export interface BrokerStatus {
  mode: 'local' | 'redis';
  /** Redis reachable (always true for a single relay). */
  connected: boolean;
  /** Poll targets this relay holds the lease of. */
  owned: number;
  /** Poll targets this relay follows (results shared by the lease holder). */
  followed: number;
  lastError: string | undefined;
  /** Cluster mode: the live relays as of this relay's last announcement (docs/cluster.md "How leases move"). */
  relays?: number;
  /** Cluster mode: this relay's share (0..1) of the leases all live relays hold, as they last announced them. */
  leaseShare?: number;
  /**
   * Cluster mode: this relay's share (0..1) of the CPU all live relays spent numbering their polls
   * (diffs, checksums, messages) over their last announcement period.
   */
  pollCpuShare?: number;
}

/** What /status shows of the cluster (its `redis` part); a relay alone shows none. */
export interface ClusterReport {
  connected: boolean;
  ownedTargets: number;
  followedTargets: number;
  /** Live relays the leases are spread over, and this relay's share (0..1) of all leases held. */
  relays: number;
  leaseShare: number;
  /** This relay's share (0..1) of the CPU all live relays spend numbering their polls. */
  pollCpuShare: number;
  /** Absent from a redacted report. */
  lastError?: string | null;
  /** `--upstream-rps` for the cluster: this relay's share, and what it keeps to while Redis is away. */
  budget?: { rps: number; share: number | null; failOpen: boolean; failOpenRps: number };
}

/** One gauge the broker adds to /metrics about itself. */
export interface BrokerGauge {
  name: string;
  help: string;
  value(): number;
}

/** One counter the broker adds to /metrics about itself, by one label (each value shown, 0 too). */
export interface BrokerCounter {
  name: string;
  help: string;
  label: string;
  values(): ReadonlyMap<string, number>;
}

export interface Broker {
  /**
   * Whether this relay polls `target` now: it holds the lease, or just took it. The lease lasts a
   * few of the target's expected intervals. Never throws: when it cannot tell (Redis down) it
   * answers true, so that data keeps flowing at the cost of duplicate upstream polls.
   */
  claim(target: string, expectedIntervalMs: number): Promise<boolean>;
  /**
   * How the streams of `target` are numbered (relay/coordination/stream-numbering.ts); `onApplied`
   * hears of each poll applied here that this relay did not ask for (another relay's).
   */
  streams<State, Delta>(
    target: string,
    market: string,
    codec: NumberedCodec<State, Delta>,
    context: NumberingContext,
    onApplied: (poll: AppliedPoll) => void,
  ): StreamNumbering<State, Delta>;
  /**
   * Upstream responses another relay polled for `target`, for the streams each relay numbers itself.
   * `wanted`, when given, is asked before a response is read: false skips it unread (no stream here
   * would use it), so that a follower does not parse and validate every response it is sent, and at
   * each claim: while no follower wants them, the holder shares its responses seldom.
   */
  follow(target: string, onResult: (result: SharedResult) => void, wanted?: () => boolean): void;
  /**
   * Hands this relay's response for `target` to whoever follows it and wants it (`follow`); `result`
   * is made only when it is sent.
   */
  share(target: string, result: () => SharedResult): void;
  /** No subscriber left here: stop following and hand the lease to another interested relay. */
  forget(target: string): void;
  /** Where a resume point beyond this relay's resume rings is looked for. */
  readonly history: ResumeHistory;
  /**
   * Where a relay of a cluster takes the recording lease of a stream it numbers itself, to record
   * it into a history store the cluster shares (./recording/); none for a relay alone.
   */
  readonly recordingLeases: LeaseTable | undefined;
  /** The gate every upstream request waits at, for `rps` requests per second. */
  rateGate(rps: number): RateGate;
  /** This relay's share (0..1) of the budget, undefined while it is all this relay's or not known. */
  budgetShare(): number | undefined;
  status(): BrokerStatus;
  /** What /status shows of the broker. */
  report(redacted: boolean): { redis?: ClusterReport };
  /** What /metrics shows of the broker, in order. */
  gauges(): readonly BrokerGauge[];
  /** What /metrics counts of the broker. */
  counters(): readonly BrokerCounter[];
  close(): Promise<void>;
}
