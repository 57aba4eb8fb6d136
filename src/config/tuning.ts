/**
 * @module config/tuning
 * The relay's limits and timings, their defaults, overrides of them and each value by key;
 * docs/operations.md lists them. The option (with its environment twin) that sets each one from the
 * command line is config/tuning-options.ts. Tests and benchmarks pass overrides to startRelay
 * directly.
 */
import type { StatusFeedLimits } from '../http/status-events.ts';
import type { EdgeLimits } from '../relay/admission/edge.ts';
import type { ConnectionLimits } from '../ws/connection-context.ts';

export interface RelayTuning {
  heartbeatMs: number;
  /** A stream upstream confirmed unchanged tells its subscribers so this often (0: never). */
  confirmMs: number;
  /** How long a stream nobody subscribes to is still polled, so a reconnect finds it (and can resume). */
  lingerMs: number;
  /** Updates each stream keeps for resume (in cluster mode, also in Redis). */
  resumeBufferSize: number;
  /** The bytes of updates each stream keeps for resume at most (its oldest go first). */
  resumeBufferBytes: number;
  /** How long an update is kept for resume: in each stream's ring, and in cluster mode in Redis for any relay. */
  historyMs: number;
  /** Cluster mode: the shortest lease on a poll target; a dead holder's targets wait this long. */
  leaseMs: number;
  /** Cluster mode: how often a relay announces itself and leases move to the relay they belong to. */
  rebalanceMs: number;
  /** A stream is stale after this many poll intervals without a successful poll. */
  staleAfterFactor: number;
  maxConnections: number;
  maxFrameBytes: number;
  upstreamTimeoutMs: number;
  upstreamRetries: number;
  /** A market the status page shows as unreachable upstream after this long without any success. */
  upstreamDownAfterMs: number;
  connection: ConnectionLimits;
  /** Per-address and per-key caps at the WebSocket edge (docs/operations.md "Edge limits"). */
  edge: EdgeLimits;
  /** `GET /status/events`: viewers at once, the backlog that drops one, the push interval. */
  statusFeed: StatusFeedLimits;
  /**
   * 0: every stream frame written at once; otherwise the frames ready for one connection leave in
   * one write at the end of the event-loop turn, or, for a connection that wrote less than this many
   * ms ago, at the end of that window (ws/write-coalescer.ts).
   */
  coalesceMs: number;
  /** Simulator tick for the embedded simulator (ms; 0 = manual). */
  simTickMs: number;
  /** REST front: how long an upstream answer is served again, and how many answers are kept. */
  restCacheTtlMs: number;
  restCacheCapacity: number;
  /**
   * REST front: the percentage of the polling budget its upstream requests may take ahead of the
   * polls (beyond it they get only what the polls leave), and how many may wait for a slot.
   */
  restBudgetPercent: number;
  restQueue: number;
  /** On SIGTERM or `POST /drain`: connections leave spread over this long (docs/operations.md "Shutdown"). */
  drainMs: number;
}

/** The groups of limits, each its own object in the tuning. */
type Group = 'connection' | 'edge' | 'statusFeed';
const groups: readonly Group[] = ['connection', 'edge', 'statusFeed'];

export const defaultTuning: RelayTuning = {
  heartbeatMs: 15_000,
  confirmMs: 5_000,
  lingerMs: 5_000,
  resumeBufferSize: 1_000,
  resumeBufferBytes: 8 * 1024 * 1024,
  historyMs: 300_000,
  leaseMs: 2_000,
  rebalanceMs: 2_000,
  staleAfterFactor: 3,
  maxConnections: 10_000,
  maxFrameBytes: 64 * 1024,
  upstreamTimeoutMs: 5_000,
  upstreamRetries: 2,
  upstreamDownAfterMs: 10_000,
  connection: {
    maxStreams: 1_000,
    requestsPerSecond: 20,
    requestBurst: 40,
    highWaterBytes: 1024 * 1024,
    maxBufferBytes: 8 * 1024 * 1024,
    slowConsumerTimeoutMs: 10_000,
    floodCloseAfterMs: 5_000,
    closeGraceMs: 3_000,
    slowConsumerLingerMs: 20_000,
  },
  // Defaults that protect a public deployment; behind a proxy set trustedProxyDepth.
  edge: {
    maxConnectionsPerAddress: 100,
    connectionsPerSecondPerAddress: 10,
    connectionBurstPerAddress: 20,
    maxConnectionsPerKey: 1_000,
    maxPendingConnections: 1_000,
    maxPendingPerAddress: 20,
    headersTimeoutMs: 10_000,
    trustedProxyDepth: 0,
    ipv6PrefixLength: 64,
    authFreeFailures: 10,
    authLockoutFailures: 30,
    authLockoutMs: 60_000,
  },
  statusFeed: { maxViewers: 20, viewerBufferBytes: 1024 * 1024, pushMs: 1_000 },
  coalesceMs: 10,
  simTickMs: 250,
  restCacheTtlMs: 1_000,
  restCacheCapacity: 1_000,
  restBudgetPercent: 25,
  restQueue: 100,
  drainMs: 10_000,
};

export type TuningOverrides = Partial<Omit<RelayTuning, Group>> & { [G in Group]?: Partial<RelayTuning[G]> };

export function resolveTuning(overrides: TuningOverrides = {}): RelayTuning {
  return {
    ...defaultTuning,
    ...overrides,
    connection: { ...defaultTuning.connection, ...overrides.connection },
    edge: { ...defaultTuning.edge, ...overrides.edge },
    statusFeed: { ...defaultTuning.statusFeed, ...overrides.statusFeed },
  };
}

type TopKey = Exclude<keyof RelayTuning, Group>;
/** A tuning value's key: a top-level name, or `group.name` for a grouped limit. */
export type TuningKey = TopKey | { [G in Group]: `${G}.${keyof RelayTuning[G] & string}` }[Group];

/** `edge.headersTimeoutMs` -> ['edge', 'headersTimeoutMs']; a top-level key has no group. */
function splitKey(key: TuningKey): [Group, string] | undefined {
  const [group, name] = key.split('.');
  return name !== undefined && (groups as readonly string[]).includes(group!)
    ? [group as Group, name]
    : undefined;
}

export function tuningValue(tuning: RelayTuning, key: TuningKey): number {
  const grouped = splitKey(key);
  if (grouped === undefined) return tuning[key as TopKey];
  const [group, name] = grouped;
  return (tuning[group] as unknown as Record<string, number>)[name]!;
}

/** Sets one value of a set of overrides, by key. */
export function setTuningValue(overrides: TuningOverrides, key: TuningKey, value: number): void {
  const grouped = splitKey(key);
  if (grouped === undefined) {
    overrides[key as TopKey] = value;
    return;
  }
  const [group, name] = grouped;
  overrides[group] = { ...overrides[group], [name]: value };
}

/** A combination of values that each pass alone but not together, as [option, what it must be]. */
export function tuningConflict(tuning: RelayTuning): [string, string] | undefined {
  const { highWaterBytes, maxBufferBytes } = tuning.connection;
  if (highWaterBytes >= maxBufferBytes) {
    return ['send-high-water-bytes', `less than --send-max-buffer-bytes (${maxBufferBytes})`];
  }
  return undefined;
}
