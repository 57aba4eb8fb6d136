/**
 * The coordination implementations every contract test runs against, side by side: a relay alone
 * (local) and a relay in cluster mode on one Redis and on a Redis Cluster of three primaries. Called
 * at a test file's top level: it starts the Redis deployments before the file's tests, on free ports,
 * and stops them after.
 */
import { afterAll, beforeAll, expect } from 'vitest';
import { LocalCoordinator, type PollCoordinator } from '../../src/relay/coordination/broker.ts';
import { RedisCoordinator } from '../../src/relay/coordination/redis/coordinator.ts';
import { type RedisDeployment, redisDeployments, startRedisDeployment } from './redis.ts';

export type CoordinatorImplementation = [name: string, create: () => Promise<PollCoordinator>];

export function useCoordinatorImplementations(): CoordinatorImplementation[] {
  const implementations: CoordinatorImplementation[] = [['local', async () => new LocalCoordinator()]];
  const deployments = new Map<string, RedisDeployment>();
  for (const kind of redisDeployments()) {
    implementations.push([
      `redis (${kind})`,
      async () => {
        const coordinator = new RedisCoordinator({ topology: deployments.get(kind)!.topology });
        expect(await coordinator.connect(5_000)).toBe(true);
        return coordinator;
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
