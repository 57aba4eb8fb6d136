/**
 * The contract every PollCoordinator keeps, run against each implementation: a relay alone (local)
 * and a relay in cluster mode that happens to be alone, on one Redis and on a Redis Cluster of three
 * primaries. The poller pool relies on exactly this.
 */
import { describe, expect, it } from 'vitest';
import { useCoordinatorImplementations } from '../support/coordinators.ts';

const implementations = useCoordinatorImplementations();

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
