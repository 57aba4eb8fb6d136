/**
 * Relays on a Redis Cluster (3 primaries, a replica each) when a primary is killed and its replica
 * takes over: both relays continue, every stream either continues or restarts in a new epoch that
 * its clients resync by snapshot, and nothing is served out of order.
 */
import { describe, it } from 'vitest';
import { targetKeys } from '../../../src/relay/coordination/redis/keys.ts';
import { useClusterRelays } from '../../support/cluster/cluster-relays.ts';
import { redisClusterAvailable } from '../../support/cluster/redis.ts';
import { waitFor } from '../../support/wait-for.ts';

describe.skipIf(!redisClusterAvailable())('relays on a Redis Cluster whose primary fails over', () => {
  const cluster = useClusterRelays();

  it('continues when a primary dies and its replica takes over: nothing out of order', async () => {
    const { a, b, viewers } = await cluster.start();
    await cluster.expectInSync(viewers, 2);
    const doomed = await cluster.redis.primaryOf(targetKeys(`book:${cluster.markets[1]!}`).lease);
    await doomed.kill();
    await cluster.redis.waitHealthy(10_000);
    await cluster.expectInSync(viewers, 4, 8_000);
    await waitFor(
      'both relays connected again',
      () => a.broker.status().connected && b.broker.status().connected,
    );
  });
});
