/**
 * The contract every PollCoordinator keeps, run against each implementation: a relay alone (local)
 * and a relay in cluster mode that happens to be alone, on one Redis and on a Redis Cluster of three
 * primaries. The poller pool relies on exactly this.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalCoordinator, type PollCoordinator } from '../../src/cluster/coordinator.ts';
import { RedisCoordinator } from '../../src/cluster/redis-coordinator.ts';
import { type RedisDeployment, redisDeployments, startRedisDeployment } from '../support/redis.ts';

const implementations: [string, () => Promise<PollCoordinator>][] = [
  ['local', async () => new LocalCoordinator()],
];
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

describe.each(implementations)('PollCoordinator contract: %s', (_name, create) => {
  it('lets a relay alone poll every target, and renew', async () => {
    const coordinator = await create();
    expect(await coordinator.claim('book:a', 1_000)).toBe(true);
    expect(await coordinator.claim('book:a', 1_000)).toBe(true);
    expect(await coordinator.claim('price:a', 1_000)).toBe(true);
    expect(coordinator.status()).toMatchObject({ connected: true, owned: 2, lastError: undefined });
    await coordinator.close();
  });

  it('forgets a released target and everything on close', async () => {
    const coordinator = await create();
    await coordinator.claim('book:b', 1_000);
    await coordinator.claim('book:c', 1_000);
    await coordinator.release('book:b');
    expect(coordinator.status().owned).toBe(1);
    await coordinator.release('book:never-claimed');
    await coordinator.close();
    expect(coordinator.status().owned).toBe(0);
  });

  it('accepts follow and unfollow without a cluster to talk to', async () => {
    const coordinator = await create();
    const received: string[] = [];
    coordinator.follow('book:d', (payload) => received.push(payload));
    coordinator.unfollow('book:d');
    expect(received).toEqual([]);
    await coordinator.close();
  });
});
