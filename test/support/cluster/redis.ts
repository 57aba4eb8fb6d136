/**
 * @module test/support/cluster/redis
 * A private `redis-server` for one test file (test/support/cluster/redis-server.ts), on a free port, with
 * nothing persisted; never the machine's shared Redis. Absent binary: outside CI the caller skips (saying what to install); in
 * CI that is an error, since `.ci/run` installs it.
 */
import { afterAll, beforeAll } from 'vitest';
import type { RedisTopology } from '../../../src/relay/coordination/redis/connection.ts';
import { findRedisCli, startRedisCluster } from './redis-cluster.ts';
import { findRedisServer, type RedisServer, startRedis } from './redis-server.ts';

export { type RedisCluster, startRedisCluster } from './redis-cluster.ts';
export { type RedisServer, startRedis } from './redis-server.ts';

/** Whether tests needing redis-server run here; prints what to install when they cannot. */
export function redisAvailable(): boolean {
  if (findRedisServer() !== undefined) return true;
  if (process.env.CI) throw new Error('redis-server is required in CI (.ci/run installs it)');
  console.warn('skipping Redis tests: install redis-server (apt-get install redis-server)');
  return false;
}

/**
 * A private redis-server for the calling test file: started before its tests, stopped after them.
 * `start()` brings a stopped one back on the same port, where its clients reconnect.
 */
export function useRedis(): { readonly server: RedisServer; start(): Promise<void> } {
  let server: RedisServer | undefined;
  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(async () => {
    await server?.stop();
  });
  return {
    get server() {
      if (server === undefined) throw new Error('redis-server not started yet');
      return server;
    },
    async start() {
      server = await startRedis(server?.port);
    },
  };
}

/** Whether tests needing a Redis Cluster (redis-server and redis-cli) run here; says what to install when not. */
export function redisClusterAvailable(): boolean {
  if (findRedisServer() !== undefined && findRedisCli() !== undefined) return true;
  if (process.env.CI)
    throw new Error('redis-server and redis-cli are required in CI (.ci/run installs them)');
  console.warn(
    'skipping Redis Cluster tests: install redis-server and redis-tools (apt-get install redis-server)',
  );
  return false;
}

/** One Redis or a Redis Cluster of 3 primaries, as a test runs against it; `spec` is what `--redis` takes. */
export interface RedisDeployment {
  topology: RedisTopology;
  spec: string;
  stop(): Promise<void>;
}

export async function startRedisDeployment(kind: RedisTopology['kind']): Promise<RedisDeployment> {
  if (kind === 'cluster') return startRedisCluster({ primaries: 3 });
  const server = await startRedis();
  return { topology: { kind: 'single', url: server.url }, spec: server.url, stop: () => server.stop() };
}

/** The deployments a cluster-mode test runs against: one Redis, and a Redis Cluster where redis-cli is. */
export function redisDeployments(): RedisTopology['kind'][] {
  if (!redisAvailable()) return [];
  return redisClusterAvailable() ? ['single', 'cluster'] : ['single'];
}
