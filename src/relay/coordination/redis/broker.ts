/**
 * @module relay/coordination/redis/broker
 * The broker of a relay in cluster mode, over one Redis or a Redis Cluster (docs/cluster.md): who
 * holds a target's lease (relay/coordination/redis/coordinator.ts), the cluster-wide streams of a
 * target (relay/coordination/redis/target-streams.ts: `book` and `price`, numbered once by the
 * holder), the holder's upstream response shared for the channels each relay numbers itself (both
 * arrive on the target's one channel), the cluster's history for a resume
 * (relay/coordination/redis/resume.ts) and the cluster's upstream budget
 * (relay/coordination/redis/rate-gate.ts).
 */
import type { RateGate } from '../../../upstream/rate-gate.ts';
import type { Broker, BrokerCounter, BrokerGauge, BrokerStatus, ClusterReport } from '../broker.ts';
import type { NumberedCodec } from '../codecs.ts';
import type { LeaseTable } from '../recording/lease-table.ts';
import { RedisLeaseTable } from '../recording/redis-lease-table.ts';
import { parseSharedResult, type SharedResult } from '../shared-result.ts';
import type {
  AppliedPoll,
  NumberedRecordSink,
  NumberingContext,
  StreamNumbering,
} from '../stream-numbering.ts';
import { clusterCodecOf } from './codecs.ts';
import type { RedisCoordinator } from './coordinator.ts';
import { formattedKinds } from './formats.ts';
import { NumberedRecord } from './numbered-record.ts';
import { RedisRateGate } from './rate-gate.ts';
import { loggedBefore } from './record-backfill.ts';
import { ClusterResume } from './resume.ts';
import { isBatchPayload } from './stream-batch.ts';
import { ClusterTarget } from './target-streams.ts';

/** A lease outlives a few missed renewals, but not a relay that died, for long. */
const DEFAULT_MIN_LEASE_MS = 2_000;
const LEASES_PER_INTERVAL = 3;

export interface RedisBrokerOptions {
  /** The shortest lease on a poll target (ms); a dead holder's targets wait this long. */
  minLeaseMs?: number;
  /** Fraction of `--upstream-rps` kept to while Redis is away and no share was ever learnt. */
  failOpenFraction?: number;
  /** Called once per distinct error of a budget script (not for Redis being away). */
  onBudgetError?: (error: Error) => void;
  /** A history store the cluster shares: what this relay numbers as a lease holder is recorded here. */
  recordNumbered?: NumberedRecordSink;
}

/** Who hears what arrives on one target's channel. */
interface Listeners {
  batch?: (payload: string) => void;
  /** `wanted` is asked before a shared response is read. */
  result?: { read: (result: SharedResult) => void; wanted: () => boolean };
}

export class RedisBroker implements Broker {
  /** Leases, the stream log and the target channels; tests reach it to watch or slow this relay. */
  readonly coordinator: RedisCoordinator;
  readonly history: ClusterResume;
  readonly recordingLeases: LeaseTable;
  readonly #options: RedisBrokerOptions;
  readonly #listeners = new Map<string, Listeners>();
  #budget: RedisRateGate | undefined;

  constructor(coordinator: RedisCoordinator, options: RedisBrokerOptions = {}) {
    this.coordinator = coordinator;
    this.history = new ClusterResume(coordinator.log);
    this.recordingLeases = new RedisLeaseTable(coordinator.commands, coordinator.instanceId);
    this.#options = options;
  }

  /** The cluster-wide budget, once upstream requests wait at it. */
  get budget(): RedisRateGate | undefined {
    return this.#budget;
  }

  /** The lease lasts a few of the target's expected intervals. */
  claim(target: string, expectedIntervalMs: number): Promise<boolean> {
    // Whole milliseconds: Redis takes nothing else as a TTL.
    const minLeaseMs = this.#options.minLeaseMs ?? DEFAULT_MIN_LEASE_MS;
    const ttlMs = Math.ceil(Math.max(minLeaseMs, LEASES_PER_INTERVAL * expectedIntervalMs));
    const result = this.#listeners.get(target)?.result;
    return this.coordinator.claim(target, ttlMs, result?.wanted() ?? false);
  }

  /** Numbered once for the cluster by the lease holder; the others follow what it writes. */
  streams<State, Delta>(
    target: string,
    market: string,
    codec: NumberedCodec<State, Delta>,
    context: NumberingContext,
    onApplied: (poll: AppliedPoll) => void,
  ): StreamNumbering<State, Delta> {
    const { log } = this.coordinator;
    const spent = (ms: number) => this.coordinator.spent(ms);
    const record = this.#options.recordNumbered;
    const cluster = clusterCodecOf(codec);
    const readBack = loggedBefore(log, { key: target, market, codec: cluster });
    const streams = new ClusterTarget(target, market, cluster, {
      ...context,
      log,
      spent,
      ...(record === undefined
        ? {}
        : { record: new NumberedRecord(record, codec.channel, market, codec.streams, readBack) }),
    });
    this.#listen(target).batch = (payload) => {
      void streams.follow(payload).then((applied) => {
        if (applied !== undefined) onApplied(applied);
      });
    };
    // Streams new here start from the cluster's state rather than wait for the holder's next poll.
    void streams.catchUp();
    return streams;
  }

  /** Malformed payloads are ignored. */
  follow(target: string, onResult: (result: SharedResult) => void, wanted?: () => boolean): void {
    this.#listen(target).result = { read: onResult, wanted: wanted ?? (() => true) };
  }

  /** Shared while a follower reads it (./share-demand.ts): `result` is not even made otherwise. */
  share(target: string, result: () => SharedResult): void {
    if (!this.coordinator.shareDemand.shareNow(target, Date.now())) return;
    this.coordinator.share(target, JSON.stringify(result()));
  }

  forget(target: string): void {
    this.#listeners.delete(target);
    this.coordinator.unfollow(target);
    void this.coordinator.release(target);
  }

  /** `rps` for the whole cluster: every relay takes its tokens from one bucket in Redis. */
  rateGate(rps: number): RateGate {
    this.#budget ??= new RedisRateGate({
      topology: this.coordinator.topology,
      instanceId: this.coordinator.instanceId,
      rps,
      failOpenFraction: this.#options.failOpenFraction ?? 0.5,
      formats: this.coordinator.formats,
      ...(this.#options.onBudgetError === undefined ? {} : { onError: this.#options.onBudgetError }),
    });
    return this.#budget;
  }

  budgetShare(): number | undefined {
    return this.#budget?.status().share;
  }

  status(): BrokerStatus {
    return this.coordinator.status();
  }

  /** Redis being away is reported, not a 503: the relay keeps serving by polling for itself. */
  report(redacted: boolean): { redis: ClusterReport } {
    const status = this.coordinator.status();
    const budget = this.#budget?.status();
    return {
      redis: {
        connected: status.connected,
        ownedTargets: status.owned,
        followedTargets: status.followed,
        relays: status.relays ?? 0,
        leaseShare: status.leaseShare ?? 0,
        pollCpuShare: status.pollCpuShare ?? 0,
        ...(redacted ? {} : { lastError: status.lastError ?? null }),
        ...(budget === undefined ? {} : { budget: { ...budget, share: budget.share ?? null } }),
      },
    };
  }

  gauges(): readonly BrokerGauge[] {
    const status = () => this.coordinator.status();
    const gauges: BrokerGauge[] = [
      {
        name: 'cluster_leases_held',
        help: 'Poll targets (a market book or price) whose lease this relay holds: it polls them for the cluster.',
        value: () => status().owned,
      },
      {
        name: 'cluster_targets_followed',
        help: 'Poll targets this relay follows: it serves the messages their lease holder writes.',
        value: () => status().followed,
      },
      {
        name: 'cluster_relays',
        help: 'Live relays in the cluster, as this relay last saw them in Redis: the relays leases are spread over.',
        value: () => status().relays ?? 0,
      },
      {
        name: 'cluster_lease_share',
        help: "This relay's share (0..1) of the leases all live relays hold, as they last announced them.",
        value: () => status().leaseShare ?? 0,
      },
      {
        name: 'cluster_poll_cpu_share',
        help: "This relay's share (0..1) of the CPU all live relays spent numbering their polls (diffs, checksums, messages), as they last announced it.",
        value: () => status().pollCpuShare ?? 0,
      },
      {
        name: 'redis_up',
        help: '1 while both Redis connections are ready, else 0 (the relay then polls for itself).',
        value: () => (status().connected ? 1 : 0),
      },
    ];
    const budget = this.#budget;
    if (budget === undefined) return gauges;
    return [
      ...gauges,
      {
        name: 'upstream_budget_share',
        help: "This relay's share (0..1) of the cluster-wide --upstream-rps: what it spends plus an equal part of what nobody spends.",
        value: () => budget.status().share ?? 0,
      },
      {
        name: 'upstream_budget_fail_open',
        help: '1 while Redis is away (or the budget is of a format this relay does not read) and this relay keeps to its last share of the budget by itself, else 0.',
        value: () => (budget.status().failOpen ? 1 : 0),
      },
    ];
  }

  counters(): readonly BrokerCounter[] {
    const { formats } = this.coordinator;
    return [
      {
        name: 'redis_unknown_format_total',
        help: 'Values read from Redis in a format this relay does not read (a newer relay during an upgrade), skipped, by kind.',
        label: 'kind',
        values: () => new Map(formattedKinds.map((kind) => [kind, formats.skipped().get(kind) ?? 0])),
      },
    ];
  }

  async close(): Promise<void> {
    await this.coordinator.close();
    await this.#budget?.close();
  }

  #listen(target: string): Listeners {
    let listeners = this.#listeners.get(target);
    if (listeners === undefined) {
      const created: Listeners = {};
      listeners = created;
      this.#listeners.set(target, created);
      this.coordinator.follow(target, (payload) => {
        if (isBatchPayload(payload)) created.batch?.(payload);
        else if (created.result?.wanted()) {
          const result = parseSharedResult(payload);
          if (result !== undefined) created.result.read(result);
        }
      });
    }
    return listeners;
  }
}
