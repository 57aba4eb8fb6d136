/**
 * One history for the cluster (docs/cluster.md "One history for the cluster"): three relay
 * processes over a private Redis record into one private PostgreSQL. The lease holder records what
 * it numbers, once: what a client of the holder received live comes back, text for text, from
 * another relay's export, also after the holder is killed with SIGKILL and its lease moves, with no
 * message twice and none missing: what the killed holder had not written to the record yet (its
 * last flush window) the next holder records again from the Redis log.
 */
import { describe, expect, it } from 'vitest';
import { liveBook, recorded, runs } from '../../support/cluster/history-reads.ts';
import { redisAvailable } from '../../support/cluster/redis.ts';
import { useSharedHistory } from '../../support/cluster/shared-history.ts';
import { postgresAvailable } from '../../support/postgres-server.ts';
import { waitFor } from '../../support/wait-for.ts';

describe.skipIf(!redisAvailable() || !postgresAvailable())('one history for the cluster', () => {
  const shared = useSharedHistory();
  const { relay, holderOf, sockets } = shared;

  it("has what the holder's client received in another relay's record, once and whole, across a SIGKILL", async () => {
    const start = Date.now();
    const market = shared.sim.market.activeMarketIds()[0]!;
    const trio = await Promise.all([relay(), relay(), relay()]);
    const viewers = await Promise.all(trio.map((at) => liveBook(at, market)));
    sockets.push(...viewers);
    const holder = await holderOf(trio, market);
    expect(holder).toBeGreaterThanOrEqual(0);
    const reader = trio[(holder + 1) % 3]!;
    const watcher = viewers[(holder + 1) % 3]!;
    await waitFor('20 updates at the holder', () => viewers[holder]!.received.length >= 20);
    await trio[holder]!.stop('SIGKILL');
    const atKill = watcher.received.length;
    await waitFor('20 updates after the lease moved', () => watcher.received.length >= atKill + 20);
    const received = [...viewers[holder]!.received, ...watcher.received];
    const epoch = received[0]!.epoch;
    const lastSeen = Math.max(...watcher.received.map((message) => message.seq));
    // The new holder writes within its flush window: the record reaches what the watcher saw.
    const record = await waitFor('the record to reach the last update seen', async () => {
      const read = await recorded(reader, market, start);
      return read.some((message) => message.seq >= lastSeen) && read;
    });
    const ofEpoch = record.filter((message) => message.epoch === epoch);
    // No message twice.
    expect(new Set(ofEpoch.map((message) => message.seq)).size).toBe(ofEpoch.length);
    // Every recorded message is the text a client received, and every received one is recorded,
    // the killed holder's last flush window too.
    const bySeq = new Map(ofEpoch.map((message) => [message.seq, message.text]));
    // A viewer that joined after the stream's first update got its state as a snapshot at the
    // last update's seq: not a message of the stream (the record has that update), so the
    // comparison is of what the stream sent every client, its first snapshot and its updates.
    const live = received.filter(
      (message) =>
        !(isSnapshot(message.text) && bySeq.has(message.seq) && !isSnapshot(bySeq.get(message.seq)!)),
    );
    const missing = live.filter((message) => message.epoch === epoch && !bySeq.has(message.seq));
    for (const message of live)
      if (message.epoch === epoch && bySeq.has(message.seq))
        expect(bySeq.get(message.seq)).toBe(message.text);
    expect(missing).toEqual([]);
    expect(runs(ofEpoch)).toHaveLength(1);
    expect(ofEpoch.length).toBeGreaterThanOrEqual(30);
  });
});

const isSnapshot = (text: string) => text.startsWith('{"type":"snapshot"');
