/**
 * @module test/support/redis
 * A private `redis-server` for one test file (test/support/redis-server.ts), on a free port, with
 * nothing persisted; never the machine's shared Redis. Absent binary: outside CI the caller skips (saying what to install); in
 * CI that is an error, since `.ci/run` installs it.
 */
import { afterAll, beforeAll } from 'vitest';
import { findRedisServer, type RedisServer, startRedis } from './redis-server.ts';

export { findRedisServer, type RedisServer, startRedis } from './redis-server.ts';

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
