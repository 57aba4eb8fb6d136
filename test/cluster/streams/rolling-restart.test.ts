/**
 * Cluster-wide streams end to end (test/support/cluster/cluster-streams.ts): three relay processes on one
 * private Redis and the simulator, restarted one after the other while their clients move to the
 * next relay with `resume`: no snapshot is sent again and every stream continues without a gap.
 */
import { describe, expect, it } from 'vitest';
import { useClusterStreams } from '../../support/cluster/cluster-streams.ts';
import { redisAvailable } from '../../support/cluster/redis.ts';

describe.skipIf(!redisAvailable())('cluster-wide streams: a rolling restart of the cluster', () => {
  const cluster = useClusterStreams();

  it('resends no snapshot to resuming clients through a rolling restart of all three relays', async () => {
    const trio = await Promise.all([cluster.relay(), cluster.relay(), cluster.relay()]);
    const watched = cluster.selections(cluster.markets.slice(1, 3));
    let placed = await Promise.all(
      trio.flatMap((at) => [
        cluster.subscribe(at, watched),
        cluster.subscribe(at, cluster.selections(cluster.markets.slice(2, 4))),
      ]),
    );
    const where = placed.map((_, i) => Math.floor(i / 2));
    const watchedBy = placed.map((_, i) =>
      i % 2 === 0 ? watched : cluster.selections(cluster.markets.slice(2, 4)),
    );
    let resent = 0;
    let recovered = 0;
    // Where each relay's clients go: a relay of the trio until it is stopped, then its replacement.
    // The replacements are never stopped, so they run in the test's process: a process start is
    // most of what this test costs on a busy machine, and the stops are what it is about.
    const running: { url: string }[] = [...trio];
    for (let i = 0; i < trio.length; i++) {
      await Promise.all(placed.map((client, c) => cluster.progress(client, watchedBy[c]!, 2)));
      await trio[i]!.stop('SIGTERM');
      const replacement = cluster.inProcessRelay(); // starts while the clients move
      const next = (i + 1) % trio.length;
      placed = await Promise.all(
        placed.map(async (client, c) => {
          if (where[c] !== i) return client;
          where[c] = next;
          const moved = await cluster.move(client, running[next]!, watchedBy[c]!);
          recovered += cluster.allRecovered(moved.answers).filter(Boolean).length;
          return moved.client;
        }),
      );
      running[i] = await replacement;
    }
    await Promise.all(placed.map((client, c) => cluster.progress(client, watchedBy[c]!, 2)));
    for (const client of cluster.clients) resent += client.of('snapshot').length;
    // Every client was placed once (6 x 5 first snapshots), then moved without any snapshot.
    expect(resent).toBe(6 * 5);
    // Relay 0's clients moved three times, relay 1's twice, relay 2's once: 12 moves of 5 streams.
    expect(recovered).toBe(12 * 5);
    expect(cluster.clients.flatMap((client) => client.violations)).toEqual([]);
  }, 90_000);
});
