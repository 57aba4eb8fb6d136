/**
 * Cluster-wide streams end to end (test/support/cluster/cluster-streams.ts): two relay processes on one
 * private Redis and the simulator. Redis stopped and started again: both relays serve throughout,
 * then agree on one numbering again, and a client resumes on either with `recovered: true`.
 */
import { describe, expect, it } from 'vitest';
import type { ChildRelay } from '../../support/cluster/child-relay.ts';
import { useClusterStreams } from '../../support/cluster/cluster-streams.ts';
import { redisAvailable } from '../../support/cluster/redis.ts';
import { waitFor } from '../../support/wait-for.ts';

describe.skipIf(!redisAvailable())('cluster-wide streams: Redis restarted under the cluster', () => {
  const cluster = useClusterStreams();

  it('survives Redis restarted: serving throughout, then one numbering again, resumable anywhere', async () => {
    const [a, b] = await Promise.all([cluster.relay(), cluster.relay()]);
    const watched = cluster.selections(cluster.markets.slice(0, 1));
    const [onA, onB] = [await cluster.subscribe(a, watched), await cluster.subscribe(b, watched)];
    const redisUp = async (at: ChildRelay) =>
      ((await (await fetch(`${at.url}/health`)).json()) as { redis: { connected: boolean } }).redis.connected;
    await cluster.redis.server.stop();
    await waitFor('both relays to see Redis gone', async () => !(await redisUp(a)) && !(await redisUp(b)));
    await cluster.progress(onA, watched);
    await cluster.progress(onB, watched);
    await cluster.redis.start();
    await waitFor('both relays back on Redis', async () => (await redisUp(a)) && (await redisUp(b)), {
      timeoutMs: 15_000,
    });
    // Every watched stream (both books and the price), each numbered again on its own.
    const same = () =>
      watched.every((selection) =>
        selection.markets.every(
          (market) =>
            onA.view(selection.channel, market, selection.depth)?.epoch ===
            onB.view(selection.channel, market, selection.depth)?.epoch,
        ),
      );
    await waitFor('one epoch per stream on both relays', same, { timeoutMs: 10_000 });
    await cluster.progress(onA, watched);
    const { client, answers } = await cluster.move(onA, b, watched);
    expect(cluster.allRecovered(answers)).toEqual([true, true, true]);
    await cluster.progress(client, watched);
    expect(client.of('snapshot')).toEqual([]);
    expect([...onA.violations, ...onB.violations, ...client.violations]).toEqual([]);
  });
});
