/**
 * Cluster-wide streams end to end (test/support/cluster/cluster-streams.ts): three relay processes on one
 * private Redis and the simulator. When the relay holding a stream's lease is killed (no shutdown,
 * no release), the lease runs out and another relay polls: the clients of the others see the same
 * epoch and seq continue, with no snapshot and no gap.
 */
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { targetKeys } from '../../../src/relay/coordination/redis/keys.ts';
import { useClusterStreams } from '../../support/cluster/cluster-streams.ts';
import { redisAvailable } from '../../support/cluster/redis.ts';
import { waitFor } from '../../support/wait-for.ts';

describe.skipIf(!redisAvailable())('cluster-wide streams: the polling relay killed', () => {
  const cluster = useClusterStreams();

  it('keeps epoch and seq continuous on the other relays when the polling relay is killed', async () => {
    const trio = await Promise.all([cluster.relay(), cluster.relay(), cluster.relay()]);
    const watched = cluster.selections(cluster.markets.slice(0, 1));
    const viewers = await Promise.all(trio.map((at) => cluster.subscribe(at, watched)));
    const inspector = new Redis(cluster.redis.server.url);
    try {
      // No lease for a moment while the relays hand it to the one rendezvous hashing names: wait past it.
      const lease = await waitFor(
        'a holder',
        async () => (await inspector.get(targetKeys(`book:${cluster.markets[0]}`).lease)) ?? undefined,
      );
      const instances = await Promise.all(trio.map((at) => at.instance()));
      const holder = instances.findIndex((instance) => lease?.startsWith(`${instance} `));
      expect(holder, `the lease "${lease}" names none of ${instances.join(', ')}`).toBeGreaterThanOrEqual(0);
      const survivors = viewers.filter((_, i) => i !== holder);
      const epochs = survivors.map((viewer) => viewer.view('book', cluster.markets[0]!, null)!.epoch);
      await trio[holder]!.stop('SIGKILL'); // no shutdown, no release: the lease runs out
      for (const viewer of survivors) await cluster.progress(viewer, watched, 5);
      expect(survivors.map((viewer) => viewer.view('book', cluster.markets[0]!, null)!.epoch)).toEqual(
        epochs,
      );
      expect(survivors.flatMap((viewer) => viewer.of('snapshot'))).toHaveLength(2 * 3);
      expect(survivors.flatMap((viewer) => viewer.violations)).toEqual([]);
      const newHolder = await inspector.get(targetKeys(`book:${cluster.markets[0]}`).lease);
      expect(newHolder?.startsWith(`${instances[holder]} `)).toBe(false);
    } finally {
      inspector.disconnect();
    }
  });
});
