/**
 * The shared history's engine stopped and started again under a cluster's relays (docs/cluster.md
 * "One history for the cluster"): serving goes on, /health says the store is away, and recording
 * resumes, the messages not written a gap of seq in the record, never a silent one.
 */
import { describe, expect, it } from 'vitest';
import { health, liveBook, recorded, runs } from '../../support/cluster/history-reads.ts';
import { redisAvailable } from '../../support/cluster/redis.ts';
import { useSharedHistory } from '../../support/cluster/shared-history.ts';
import { postgresAvailable } from '../../support/postgres-server.ts';
import { waitFor } from '../../support/wait-for.ts';

describe.skipIf(!redisAvailable() || !postgresAvailable())('the shared history engine away', () => {
  const shared = useSharedHistory();
  const { relay, sockets } = shared;

  it('serves on while the engine is away, says so on /health, and records again after', async () => {
    const start = Date.now();
    const market = shared.sim.market.activeMarketIds()[1]!;
    const pair = await Promise.all([relay(), relay()]);
    const viewer = await liveBook(pair[0]!, market);
    sockets.push(viewer);
    await waitFor('10 updates', () => viewer.received.length >= 10);
    await waitFor('recording', async () => (await recorded(pair[0]!, market, start)).length >= 10);
    await shared.postgres.stop();
    try {
      await waitFor('/health to say the store is away', async () => {
        const { history } = await health(pair[0]!);
        return !history.writing || !history.reachable;
      });
      // Live serving goes on.
      const during = viewer.received.length;
      await waitFor('updates during the outage', () => viewer.received.length >= during + 10);
    } finally {
      await shared.postgres.start();
    }
    const afterOutage = viewer.received.length;
    await waitFor('updates after the outage', () => viewer.received.length >= afterOutage + 10);
    const lastSeen = viewer.received.at(-1)!.seq;
    const record = await waitFor('recording again', async () => {
      const read = await recorded(pair[0]!, market, start);
      return read.some((message) => message.seq >= lastSeen) && read;
    });
    await waitFor('/health to say the store writes again', async () => {
      const { history } = await health(pair[0]!);
      return history.writing && history.reachable;
    });
    const epoch = viewer.received[0]!.epoch;
    const ofEpoch = record.filter((message) => message.epoch === epoch);
    expect(new Set(ofEpoch.map((message) => message.seq)).size).toBe(ofEpoch.length);
    // What was not written while the engine was away is a gap of seq the record shows.
    expect(runs(ofEpoch).length).toBeGreaterThanOrEqual(2);
    const bySeq = new Map(ofEpoch.map((message) => [message.seq, message.text]));
    for (const message of viewer.received)
      if (bySeq.has(message.seq)) expect(bySeq.get(message.seq)).toBe(message.text);
  });
});
