/**
 * Cluster-wide streams end to end (test/support/cluster/cluster-streams.ts): three relay processes on one
 * private Redis and the simulator. A stream's epoch and seq are the same on every relay, so a
 * client of a relay stopped with SIGTERM resumes on another with `recovered: true`, no snapshot and
 * no gap, in the compact encoding too.
 */
import { describe, expect, it } from 'vitest';
import { COMPACT_SUBPROTOCOL } from '../../../packages/protocol/src/protocol/compact.ts';
import { useClusterStreams } from '../../support/cluster/cluster-streams.ts';
import { redisAvailable } from '../../support/cluster/redis.ts';

describe.skipIf(!redisAvailable())('cluster-wide streams: resuming on another relay after SIGTERM', () => {
  const cluster = useClusterStreams();

  it('resumes a client of a relay stopped with SIGTERM on another relay: recovered, no snapshot, no gap', async () => {
    const [a, b] = await Promise.all([cluster.relay(), cluster.relay(), cluster.relay()]);
    const watched = cluster.selections(cluster.markets.slice(0, 2));
    // Market 0 is watched on b too (its ring has it); market 1 only on a (b starts it from Redis).
    await cluster.subscribe(b, cluster.selections(cluster.markets.slice(0, 1)));
    // In the compact encoding: messages from Redis go out with the serving relay's stream numbers.
    const leaving = await cluster.subscribe(a, watched, [COMPACT_SUBPROTOCOL]);
    await cluster.progress(leaving, watched);
    await a.stop('SIGTERM');
    expect(leaving.closeCode).toBe(1001);
    const { client, answers } = await cluster.move(leaving, b, watched, [COMPACT_SUBPROTOCOL]);
    expect(cluster.allRecovered(answers)).toEqual([true, true, true, true, true]);
    await cluster.progress(client, watched);
    expect(client.of('snapshot')).toEqual([]);
    expect([...leaving.violations, ...client.violations]).toEqual([]);
    expect([leaving.compactMessages, client.compactMessages].every((count) => count > 0)).toBe(true);
  });
});
