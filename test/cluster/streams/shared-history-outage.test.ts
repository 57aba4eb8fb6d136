/**
 * The shared history's engine stopped and started again under a cluster's relays (docs/cluster.md
 * "One history for the cluster"): serving goes on, /health and the history metrics of every relay
 * say the store is away (the holder's, that its writes fail and what they dropped), and recording
 * resumes; what was not written is a hole that a replay from the other relay marks with a
 * `replay_gap` over it, never a silent one.
 */
import { describe, expect, it } from 'vitest';
import {
  health,
  liveBook,
  metric,
  recorded,
  replayBook,
  silentlyMissing,
} from '../../support/cluster/history-reads.ts';
import { redisAvailable } from '../../support/cluster/redis.ts';
import { useSharedHistory } from '../../support/cluster/shared-history.ts';
import { postgresAvailable } from '../../support/postgres-server.ts';
import { waitFor } from '../../support/wait-for.ts';

describe.skipIf(!redisAvailable() || !postgresAvailable())('the shared history engine away', () => {
  const shared = useSharedHistory();
  const { relay, holderOf, sockets } = shared;

  it('serves on while the engine is away, says so, records again after, and marks the hole', async () => {
    const start = Date.now();
    const market = shared.sim.market.activeMarketIds()[1]!;
    // A flush window of a second: the holder's write fails, and succeeds again, sooner.
    const pair = await Promise.all([0, 1].map(() => relay(['--history-flush-ms=1000'])));
    const viewer = await liveBook(pair[0]!, market);
    sockets.push(viewer);
    const held = await holderOf(pair, market);
    expect(held).toBeGreaterThanOrEqual(0);
    const [holder, other] = [pair[held]!, pair[1 - held]!];
    await waitFor('recording', async () => (await recorded(other, market, start)).length >= 10);
    await shared.postgres.stop();
    try {
      // The holder's next flush fails (its batch dropped: the hole); the other relay, which
      // writes nothing of this book, finds the engine away when it next reads what the store holds.
      await waitFor('the holder to say its writes fail', async () => {
        const { history } = await health(holder);
        return !history.writing && !history.reachable;
      });
      expect(await metric(holder, 'history_write_failing')).toBe(1);
      expect(await metric(holder, 'history_store_up')).toBe(0);
      expect(await metric(holder, 'history_messages_dropped_total')).toBeGreaterThan(0);
      const during = viewer.received.length;
      await Promise.all([
        waitFor(
          'the other relay to say the store is away',
          async () => !(await health(other)).history.reachable,
        ),
        waitFor('live updates during the outage', () => viewer.received.length >= during + 10),
      ]);
      expect(await metric(other, 'history_store_up')).toBe(0);
    } finally {
      await shared.postgres.start();
    }
    const afterOutage = viewer.received.length;
    await waitFor('updates after the outage', () => viewer.received.length >= afterOutage + 10);
    const lastSeen = viewer.received.at(-1)!.seq;
    const record = await waitFor('recording again', async () => {
      const read = await recorded(other, market, start);
      return read.some((message) => message.seq >= lastSeen) && read;
    });
    // The holder says so at its next write; the other relay when it next reads the store's figures.
    await waitFor('the holder to say it writes again', async () => {
      const { history } = await health(holder);
      return history.writing && history.reachable;
    });
    expect(await metric(holder, 'history_store_up')).toBe(1);

    const epoch = viewer.received[0]!.epoch;
    const first = JSON.parse(record[0]!.text) as { rts: string };
    const replay = await replayBook(other, market, first.rts, new Date().toISOString());
    const seqs = replay.messages.map((message) => message.seq);
    expect(new Set(seqs).size).toBe(seqs.length); // no message twice
    expect(replay.messages.every((message) => message.epoch === epoch)).toBe(true);
    // Something was lost, and the replay says where: a gap within the epoch, over every message
    // received live that the record does not have.
    const live = new Map(viewer.received.map((message) => [message.seq, message]));
    const lost = [...live.keys()].filter(
      (seq) => seq >= seqs[0]! && seq <= seqs.at(-1)! && !seqs.includes(seq),
    );
    expect(lost.length).toBeGreaterThan(0);
    expect(replay.gaps.length).toBeGreaterThanOrEqual(1);
    expect(replay.gaps.every((gap) => gap.reason === undefined)).toBe(true);
    expect(silentlyMissing(viewer.received, replay)).toEqual([]);
    for (const message of replay.messages) {
      const seen = live.get(message.seq);
      if (seen !== undefined) expect(message.text).toBe(seen.text);
    }
  });
});
