/**
 * @module relay/coordination/redis/connection
 * What `--redis` names (docs/cluster.md "Running on a Redis Cluster"): one Redis, or a Redis Cluster
 * given as a comma-separated list of node URLs or as one URL of a node that reports cluster mode.
 * Every connection of the relay (the coordinator's two, the budget's one) is opened here, so the
 * single-node and cluster clients are chosen in one place; the rest of the relay speaks to
 * `RedisClient`, the commands both have. What a cluster's subscriber needs beyond its client (its
 * sharded subscriptions moved with their slots) is here too.
 */
import { Cluster, type ClusterNode, Redis, type RedisOptions } from 'ioredis';
import { defineScripts } from './scripts.ts';

/** Either client: both run the relay's scripts (./scripts.ts), SPUBLISH and SSUBSCRIBE, and report `status`. */
export type RedisClient = Redis | Cluster;

export type RedisTopology =
  | { kind: 'single'; url: string }
  /** `url`: the first node's URL, whose credentials and TLS every node shares. */
  | { kind: 'cluster'; nodes: ClusterNode[]; url: string };

/** The node URLs of `--redis` (comma-separated), trimmed, empty parts dropped. */
export function redisUrls(spec: string): string[] {
  return spec
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
}

function nodeOf(url: string): { host: string; port: number } {
  const parsed = new URL(url);
  return { host: parsed.hostname, port: parsed.port === '' ? 6379 : Number(parsed.port) };
}

/** Credentials and TLS from a URL, for every node of a cluster. */
function credentialsOf(url: string): RedisOptions {
  const parsed = new URL(url);
  const options: RedisOptions = {};
  if (parsed.username !== '') options.username = decodeURIComponent(parsed.username);
  if (parsed.password !== '') options.password = decodeURIComponent(parsed.password);
  if (parsed.protocol === 'rediss:') options.tls = {};
  return options;
}

/**
 * Several URLs: a cluster. One URL: a cluster when that node says so (`INFO cluster`), else one
 * Redis. A node that cannot be asked within `timeoutMs` is taken as one Redis, today's behaviour:
 * give a cluster's nodes as a list to be independent of its being up at start.
 */
export async function resolveTopology(spec: string, timeoutMs: number): Promise<RedisTopology> {
  const urls = redisUrls(spec);
  const first = urls[0];
  if (first === undefined) throw new Error('--redis names no URL');
  if (urls.length > 1) return { kind: 'cluster', nodes: urls.map(nodeOf), url: first };
  return (await reportsClusterMode(first, timeoutMs))
    ? { kind: 'cluster', nodes: [nodeOf(first)], url: first }
    : { kind: 'single', url: first };
}

async function reportsClusterMode(url: string, timeoutMs: number): Promise<boolean> {
  const probe = new Redis(url, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  probe.on('error', () => {});
  try {
    await probe.connect();
    const info = await probe.info('cluster');
    return /^cluster_enabled:1\s*$/m.test(info);
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

export interface ConnectionOptions {
  /** Queue commands while disconnected (a subscriber's subscriptions) instead of failing them at once. */
  offlineQueue: boolean;
  lazyConnect: boolean;
}

/**
 * A connection to the topology. Commands fail fast while Redis is away (one retry, and no offline
 * queue unless asked), so that a relay falls back to polling for itself at once. A cluster client
 * follows MOVED and ASK, refreshes its slot map, and subscribes to sharded channels on the shard
 * that owns each (one subscriber connection per primary).
 */
export function openRedis(topology: RedisTopology, options: ConnectionOptions): RedisClient {
  const perNode: RedisOptions = {
    maxRetriesPerRequest: 1,
    enableOfflineQueue: options.offlineQueue,
  };
  const redis =
    topology.kind === 'single'
      ? new Redis(topology.url, { ...perNode, lazyConnect: options.lazyConnect })
      : openCluster(topology, options, perNode);
  defineScripts(redis);
  return redis;
}

function openCluster(
  topology: Extract<RedisTopology, { kind: 'cluster' }>,
  options: ConnectionOptions,
  perNode: RedisOptions,
): Cluster {
  return new Cluster(topology.nodes, {
    lazyConnect: options.lazyConnect,
    enableOfflineQueue: options.offlineQueue,
    shardedSubscribers: true,
    // A failover or a resharding answers MOVED, ASK or CLUSTERDOWN for a moment: retry soon, a few
    // times, then fail the command (the relay polls for itself meanwhile).
    retryDelayOnMoved: 20,
    retryDelayOnFailover: 100,
    retryDelayOnClusterDown: 100,
    retryDelayOnTryAgain: 50,
    maxRedirections: 8,
    slotsRefreshTimeout: 1_000,
    slotsRefreshInterval: 2_000,
    clusterRetryStrategy: (times) => Math.min(100 * times, 2_000),
    redisOptions: { ...perNode, ...credentialsOf(topology.url) },
  });
}

/** After a change of a Redis Cluster's slot map, subscriptions move this soon (and retry this often). */
const RESUBSCRIBE_MS = 250;
/** How long after a change of the slot map the nodes may still disagree on a slot's owner. */
const RESHARD_SETTLE_MS = 10_000;

/**
 * Keeps the sharded subscriptions of `subscriber` (the keys of `channels`, read at each change) on
 * the primaries that own their slots. A slot that moved to another primary (resharding, failover)
 * takes its sharded subscriptions with it: the old primary drops them. The client follows the new
 * map, but may miss that moment, so every change of the slot map subscribes every followed channel
 * again, on its owner now, retrying until the client's own view of the map has caught up (the old
 * owner answers MOVED). The nodes learn of a move one by one: a subscription sent while the old
 * owner still serves the slot lands there and is dropped when it hands the slot over, after which
 * the map no longer changes. So the refreshes of a settling window after each change subscribe
 * again too. A message lost meanwhile is a gap the follower fills from the stream's history.
 */
export function keepShardedSubscriptions(
  subscriber: Cluster,
  channels: ReadonlyMap<string, unknown>,
  closed: () => boolean,
): void {
  /** The last slot map seen, to notice a resharding or failover. */
  let slotMap: string | undefined;
  /** Until when refreshes after a change of the slot map still subscribe again (Date.now()). */
  let settlingUntil = 0;
  const resubscribe = (channel: string, map: string): void => {
    setTimeout(() => {
      // Followed no more, or the map moved again (that change subscribes again itself).
      if (!channels.has(channel) || map !== slotMap || closed()) return;
      subscriber
        .sunsubscribe(channel)
        .then(() => subscriber.ssubscribe(channel))
        .catch(() => resubscribe(channel, map));
    }, RESUBSCRIBE_MS).unref();
  };
  subscriber.on('refresh', () => {
    const map = slotMapOf(subscriber);
    const now = Date.now();
    if (map !== slotMap) {
      const first = slotMap === undefined;
      slotMap = map;
      if (first) return;
      settlingUntil = now + RESHARD_SETTLE_MS;
    } else if (now > settlingUntil) return;
    for (const channel of channels.keys()) resubscribe(channel, map);
  });
}

/** Which primary serves each range of slots, as text: equal texts, the same map. */
function slotMapOf(cluster: Cluster): string {
  const ranges: string[] = [];
  let owner: string | undefined;
  cluster.slots.forEach((nodes, slot) => {
    if (nodes[0] === owner) return;
    owner = nodes[0];
    ranges.push(`${slot}:${owner}`);
  });
  return ranges.join(' ');
}
