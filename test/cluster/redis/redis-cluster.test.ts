/**
 * Relays on a Redis Cluster (3 primaries, a replica each), end to end: given one node's URL a relay
 * finds cluster mode by itself, given the list it uses it; upstream sees one poller per target for
 * the cluster, and clients of both relays keep books equal to upstream with no gap and nothing out
 * of order, also while a book's slot moves to another primary (MOVED, ASK).
 */
import { describe, expect, it } from 'vitest';
import { targetKeys } from '../../../src/relay/coordination/redis/keys.ts';
import { useClusterRelays } from '../../support/cluster/cluster-relays.ts';
import { redisClusterAvailable } from '../../support/cluster/redis.ts';

describe.skipIf(!redisClusterAvailable())('relays on a Redis Cluster', () => {
  const cluster = useClusterRelays();

  it('finds cluster mode from one node, polls each book once for the cluster, keeps clients in sync', async () => {
    const { a, b, viewers } = await cluster.start();
    expect([a, b].map((of) => of.broker.status())).toEqual([
      expect.objectContaining({ mode: 'redis', connected: true, followed: cluster.markets.length }),
      expect.objectContaining({ mode: 'redis', connected: true, followed: cluster.markets.length }),
    ]);
    await cluster.expectInSync(viewers, 5);
    // The books' keys live on more than one primary: the relays really spoke to several shards.
    const primaries = new Set<number>();
    for (const market of cluster.markets)
      primaries.add((await cluster.redis.primaryOf(targetKeys(`book:${market}`).lease)).port);
    expect(primaries.size).toBeGreaterThan(1);
  });

  it("survives a book's slot moving to another primary (MOVED, ASK) with no gap", async () => {
    const { viewers } = await cluster.start();
    await cluster.expectInSync(viewers, 2);
    const moved = targetKeys(`book:${cluster.markets[0]!}`).lease;
    const from = await cluster.redis.primaryOf(moved);
    await cluster.redis.moveSlotOf(moved);
    expect((await cluster.redis.primaryOf(moved)).port).not.toBe(from.port);
    await cluster.expectInSync(viewers, 5);
  });
});
