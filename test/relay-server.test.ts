import { once } from 'node:events';
import { createServer, type Server } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRelay } from '../src/relay-server.ts';
import { type SimulatorHandle, startSimulator } from '../src/sim/server.ts';
import { type RedisServer, redisAvailable, startRedis } from './support/cluster/redis.ts';
import { waitFor } from './support/wait-for.ts';

describe.skipIf(!redisAvailable())('startRelay when listen fails', () => {
  let redis: RedisServer;
  let sim: SimulatorHandle;
  let taken: Server;
  let observer: Redis;

  beforeAll(async () => {
    redis = await startRedis();
    sim = await startSimulator({ markets: 2, seed: 1, tickMs: 0 });
    taken = createServer();
    taken.listen(0, '127.0.0.1');
    await once(taken, 'listening');
    observer = new Redis(redis.url);
  });

  afterAll(async () => {
    observer.disconnect();
    taken.close();
    await sim.close();
    await redis.stop();
  });

  /** Connections Redis sees, apart from the observer's own. */
  async function otherRedisClients(): Promise<number> {
    const list = (await observer.client('LIST')) as string;
    return list.trim().split('\n').length - 1;
  }

  it('rejects with the listen error and releases the coordinator (its Redis connections)', async () => {
    const { port } = taken.address() as { port: number };
    const start = startRelay({
      port,
      host: '127.0.0.1',
      upstream: sim.url,
      redis: redis.url,
      bookPollMs: 50,
      pricePollMs: 50,
      upstreamConcurrency: 4,
      upstreamRps: 100,
      logLevel: 'silent',
      simMarkets: 2,
      simSeed: 1,
    });
    await expect(start).rejects.toMatchObject({ code: 'EADDRINUSE' });
    await waitFor('the relay to let go of Redis', async () => (await otherRedisClients()) === 0);
  });
});
