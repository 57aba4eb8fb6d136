/**
 * One history for the cluster, read back (docs/cluster.md "One history for the cluster"): three
 * relay processes over a private Redis record into one private PostgreSQL; a client of a relay that
 * never held the book gets through `replay` and through `since` the messages a client of the holder
 * received live (the same text: seq, epoch, data, checksum), also across the holder's SIGKILL and
 * the lease moving: no message twice and none missing (the new holder records again from the Redis
 * log what the killed one had not written to the record yet), so no `replay_gap`; and on `since`
 * every update after the state at the time.
 */
import { describe, expect, it } from 'vitest';
import { liveBook, type Received, recorded } from '../../support/cluster/history-reads.ts';
import { redisAvailable } from '../../support/cluster/redis.ts';
import { useSharedHistory } from '../../support/cluster/shared-history.ts';
import { postgresAvailable } from '../../support/postgres-server.ts';
import { TextClient } from '../../support/replay-client.ts';
import { waitFor } from '../../support/wait-for.ts';

interface Sent {
  type: string;
  epoch: string;
  seq: number;
  rts: string;
  checksum?: number;
  replay?: string;
}

const parsed = (text: string) => JSON.parse(text) as Sent;

function withoutReplay(text: string): string {
  const { replay: _id, ...message } = JSON.parse(text) as Record<string, unknown>;
  return JSON.stringify(message);
}

describe.skipIf(!redisAvailable() || !postgresAvailable())('one history for the cluster, read back', () => {
  const shared = useSharedHistory();
  const { relay, holderOf, sockets } = shared;

  it("replays and answers since on another relay what the holder's client received, across a SIGKILL", async () => {
    const market = shared.sim.market.activeMarketIds()[0]!;
    const trio = await Promise.all([relay(), relay(), relay()]);
    const viewers = await Promise.all(trio.map((at) => liveBook(at, market)));
    sockets.push(...viewers);
    await waitFor('20 updates at every relay', () => viewers.every((viewer) => viewer.received.length >= 20));
    // Killed while its client has updates the record has not (its last flush window): the next
    // holder records them again from the Redis log. The lease may still move while the relays'
    // weights settle, and a relay answers an export with its own buffer written first, so the
    // holder and the relay read from are found again each time, until a read from a relay that
    // does not hold the lease shows the record behind the holder's client.
    // A loaded machine may take several flush windows to show it (a slow write, a slow read).
    let holder = -1;
    await waitFor(
      'the record behind the holder',
      async () => {
        holder = await holderOf(trio, market);
        if (holder < 0) return false;
        const read = await recorded(trio[(holder + 1) % 3]!, market, 0);
        const newest = Math.max(0, ...read.map((message) => message.seq));
        return (
          newest > 0 &&
          viewers[holder]!.received.at(-1)!.seq > newest + 2 &&
          (await holderOf(trio, market)) === holder
        );
      },
      { timeoutMs: 20_000, everyMs: 50 },
    );
    const reader = trio[(holder + 1) % 3]!;
    const watcher = viewers[(holder + 1) % 3]!;
    await trio[holder]!.stop('SIGKILL');
    const atKill = watcher.received.length;
    await waitFor('20 updates after the lease moved', () => watcher.received.length >= atKill + 20);
    // What the stream sent live, by seq: to the holder's client before the kill, the watcher's after.
    // A client's snapshot at a later seq than the stream's first (its join, on a loaded machine after
    // the first updates) is its own: the stream sent, and the record holds, an update at that seq.
    const sentLive = (received: readonly Received[]) =>
      received.filter((message) => parsed(message.text).type === 'update' || message.seq === 1);
    const live = new Map<number, Received>();
    for (const message of [...sentLive(viewers[holder]!.received), ...sentLive(watcher.received)])
      live.set(message.seq, message);
    const epoch = viewers[holder]!.received[0]!.epoch;
    const lastSeen = Math.max(...watcher.received.map((message) => message.seq));
    const record = await waitFor('the record to reach the last update seen', async () => {
      const read = await recorded(reader, market, 0);
      return read.some((message) => message.seq >= lastSeen) && read;
    });
    const first = parsed(record[0]!.text);
    expect(first).toMatchObject({ type: 'snapshot', epoch, seq: 1 });

    const client = await TextClient.connect(reader);
    sockets.push(client);
    client.send({
      op: 'replay',
      id: 'r1',
      channel: 'book',
      markets: [market],
      from: first.rts,
      to: new Date().toISOString(),
      speed: 'max',
    });
    const done = await client.answer('replayed', 'r1');
    const replayed = client.stream('r1').map(({ text }) => text);
    expect(done).toMatchObject({ messages: replayed.length });
    const seqs = replayed.map((text) => parsed(text).seq);
    expect(new Set(seqs).size).toBe(seqs.length); // no message twice
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(seqs.at(-1)).toBeGreaterThanOrEqual(lastSeen);
    for (const text of replayed) {
      const message = parsed(text);
      expect(message.epoch).toBe(epoch);
      const seen = live.get(message.seq);
      if (seen !== undefined) expect(withoutReplay(text)).toBe(seen.text);
    }
    // Every update sent live is in the replay, the killed holder's last ones too: no replay_gap.
    expect([...live.keys()].filter((seq) => !seqs.includes(seq))).toEqual([]);
    expect(client.of('replay_gap', 'r1')).toEqual([]);
    expect(seqs.length).toBeGreaterThanOrEqual(40);

    // since a time before the kill: the state then, every message after it, then live.
    const sinceAt = parsed(viewers[holder]!.received[5]!.text).rts;
    const since = await TextClient.connect(reader);
    sockets.push(since);
    since.send({ op: 'subscribe', id: 's1', channel: 'book', markets: [market], since: sinceAt });
    await waitFor('the since answer to reach past the last update seen', () =>
      since.stream().some(({ message }) => (message.seq as number) > lastSeen + 5),
    );
    const answer = since.stream().map(({ text }) => text);
    const [start, ...after] = answer.map(parsed);
    // The newest by seq: `live` is in insertion order, the holder's client's updates before the
    // watcher's, so a watcher that joined first adds the stream's earliest seqs last.
    const at = [...live.values()]
      .filter((message) => parsed(message.text).rts <= sinceAt)
      .reduce((newest, message) => (message.seq > newest.seq ? message : newest));
    expect(start).toMatchObject({ type: 'snapshot', epoch, seq: at.seq });
    expect(start!.checksum).toBe(parsed(at.text).checksum);
    // Then every update after it, as sent live: the record, the held live messages, and where
    // neither has them yet (the holder's last second, on another relay) this relay's resume ring.
    expect(after.length).toBeGreaterThanOrEqual(lastSeen - at.seq);
    for (const [i, message] of after.entries()) {
      expect(message).toMatchObject({ type: 'update', epoch, seq: at.seq + i + 1 });
      const seen = live.get(message.seq);
      if (seen !== undefined) expect(answer[i + 1]).toBe(seen.text);
    }
  });
});
