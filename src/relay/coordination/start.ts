/**
 * @module relay/coordination/start
 * The one place that picks a broker: a relay alone without `--redis`, else a relay in cluster mode
 * over the Redis or Redis Cluster the option names, connected (or still trying) before it returns.
 */
import type { Broker } from './broker.ts';
import { LocalBroker } from './local/broker.ts';
import { RedisBroker } from './redis/broker.ts';
import { resolveTopology } from './redis/connection.ts';
import { RedisCoordinator } from './redis/coordinator.ts';
import { type FormattedKind, type RedisFormat, RedisFormats } from './redis/formats.ts';
import type { OutageSummary } from './redis/outage-errors.ts';
import type { NumberedRecordSink } from './stream-numbering.ts';

/** Waiting longer than this for Redis at start would only delay serving: the relay polls itself meanwhile. */
const REDIS_CONNECT_MS = 2_000;

export interface BrokerOptions {
  /** `--redis`: one Redis URL, or the nodes of a Redis Cluster; a relay alone without it. */
  redis: string | undefined;
  /** Updates kept per stream in Redis (`--resume-buffer`). */
  historyLength: number;
  /** How long an update is kept in Redis (`--history-ms`). */
  historyMs: number;
  /** How often this relay announces itself and leases move (`--rebalance-ms`). */
  rebalanceMs: number;
  /** The shortest lease on a poll target (ms). */
  minLeaseMs: number;
  /** `--fail-open-rps-fraction`. */
  failOpenFraction: number;
  /** The formats of what is written to Redis, oldest first (the shipped ones unless a test gives the next). */
  formats?: readonly RedisFormat[];
  /** What the operators hear of the cluster: each for its own log line. */
  on: BrokerLog;
  /** A history store the cluster shares: what this relay numbers as a lease holder is recorded here. */
  recordNumbered?: NumberedRecordSink | undefined;
}

export interface BrokerLog {
  redisError(error: Error): void;
  redisRecovered(summary: OutageSummary): void;
  budgetError(error: Error): void;
  /** The first value of `kind` read in a format this relay does not read (`version` when known). */
  unknownFormat(kind: FormattedKind, version: string | undefined): void;
  /** Connected to Redis at start, or not yet (the relay polls for itself meanwhile). */
  joined(
    outcome: { connected: boolean; instance: string; redis: 'single' | 'cluster' },
    message: string,
  ): void;
}

export async function startBroker(options: BrokerOptions): Promise<Broker> {
  if (options.redis === undefined) return new LocalBroker();
  const topology = await resolveTopology(options.redis, REDIS_CONNECT_MS);
  const coordinator = new RedisCoordinator({
    topology,
    historyLength: options.historyLength,
    historyMs: options.historyMs,
    rebalanceMs: options.rebalanceMs,
    onError: options.on.redisError,
    onRecover: options.on.redisRecovered,
    formats: new RedisFormats(options.formats, options.on.unknownFormat),
  });
  const connected = await coordinator.connect(REDIS_CONNECT_MS);
  options.on.joined(
    { connected, instance: coordinator.instanceId, redis: topology.kind },
    connected
      ? `cluster mode: leases and cluster-wide streams over ${topology.kind === 'cluster' ? 'a redis cluster' : 'redis'}`
      : 'cluster mode: redis not reachable yet',
  );
  return new RedisBroker(coordinator, {
    minLeaseMs: options.minLeaseMs,
    failOpenFraction: options.failOpenFraction,
    onBudgetError: options.on.budgetError,
    ...(options.recordNumbered === undefined ? {} : { recordNumbered: options.recordNumbered }),
  });
}
