/**
 * The brokers every contract test runs against, side by side: a relay alone (local) and a relay in
 * cluster mode on one Redis and on a Redis Cluster of three primaries. Called at a test file's top
 * level: it starts the Redis deployments before the file's tests, on free ports, and stops them after.
 */
import { afterAll, beforeAll, expect } from 'vitest';
import type { Broker } from '../../../src/relay/coordination/broker.ts';
import { LocalBroker } from '../../../src/relay/coordination/local/broker.ts';
import { RedisBroker } from '../../../src/relay/coordination/redis/broker.ts';
import { RedisCoordinator } from '../../../src/relay/coordination/redis/coordinator.ts';
import { type RedisDeployment, redisDeployments, startRedisDeployment } from './redis.ts';

export type BrokerImplementation = [name: string, create: () => Promise<Broker>];

export function useBrokerImplementations(): BrokerImplementation[] {
  const implementations: BrokerImplementation[] = [['local', async () => new LocalBroker()]];
  const deployments = new Map<string, RedisDeployment>();
  for (const kind of redisDeployments()) {
    implementations.push([
      `redis (${kind})`,
      async () => {
        const coordinator = new RedisCoordinator({ topology: deployments.get(kind)!.topology });
        expect(await coordinator.connect(5_000)).toBe(true);
        return new RedisBroker(coordinator);
      },
    ]);
  }

  beforeAll(async () => {
    await Promise.all(
      redisDeployments().map(async (kind) => deployments.set(kind, await startRedisDeployment(kind))),
    );
  }, 20_000);
  afterAll(async () => {
    await Promise.all([...deployments.values()].map((deployment) => deployment.stop()));
  });
  return implementations;
}
