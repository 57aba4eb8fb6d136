/**
 * One history for the cluster, of the streams each relay numbers itself (docs/cluster.md "One
 * history for the cluster"): two relay processes over a private Redis record into one private
 * PostgreSQL. Relay A's client holds `trades` and `market` of one market first, so A holds their
 * recording leases; relay B's client holds them too (in B's own epochs), and through B the record
 * and `replay` give exactly the updates A's client received (the same text: epoch, seq, data,
 * checksum). A is then killed with SIGKILL: the leases move to B, whose record starts with a
 * snapshot of its state, so the record has one new epoch there, which `replay` marks with one
 * `replay_gap`, and no message twice; `since` a time before the kill starts from A's state then.
 */
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { streamKey } from '../../../packages/protocol/src/channels/stream-key.ts';
import { recordingLeaseKey } from '../../../src/relay/coordination/redis/keys.ts';
import type { ChildRelay } from '../../support/cluster/child-relay.ts';
import { redisAvailable } from '../../support/cluster/redis.ts';
import { useSharedHistory } from '../../support/cluster/shared-history.ts';
import { postgresAvailable } from '../../support/postgres-server.ts';
import { TextClient } from '../../support/replay-client.ts';
import { waitFor } from '../../support/wait-for.ts';

interface Message {
  type: string;
  channel: string;
  epoch: string;
  seq: number;
  rts: string;
  replay?: string;
}

const parsed = (text: string) => JSON.parse(text) as Message;
const channels = ['trades', 'market'] as const;

function withoutReplay(text: string): string {
  const { replay: _id, ...message } = JSON.parse(text) as Record<string, unknown>;
  return JSON.stringify(message);
}

/** The stream's record as `relay` exports it, in order: every line a message as sent. */
async function exported(relay: ChildRelay, channel: string, market: string): Promise<string[]> {
  const response = await fetch(
    `${relay.url}/v1/history/${channel}?market=${market}&from=${new Date(0).toISOString()}`,
  );
  if (response.status !== 200) throw new Error(`export answered ${response.status}`);
  return (await response.text()).split('\n').filter((line) => line !== '');
}

/** The live messages of `channel` a client received, by epoch and seq. */
function liveOf(client: TextClient, channel: string): Map<string, string> {
  const live = new Map<string, string>();
  for (const { text, message } of client.stream())
    if (message.channel === channel) live.set(`${message.epoch as string}/${message.seq as number}`, text);
  return live;
}

/**
 * `liveOf(client, channel)` once the client has read every message at `positions` (`epoch/seq`):
 * a relay sends a message before it flushes it to the record, but an answer read from the record
 * may be read here before the client has read the last of those messages off its socket.
 */
function liveHaving(
  client: TextClient,
  channel: string,
  positions: readonly string[],
): Promise<Map<string, string>> {
  return waitFor(`the ${channel} client to have read ${positions.length} recorded messages`, () => {
    const received = liveOf(client, channel);
    return positions.every((position) => received.has(position)) && received;
  });
}

describe.skipIf(!redisAvailable() || !postgresAvailable())(
  'one history for the cluster: streams each relay numbers',
  () => {
    const shared = useSharedHistory();
    const { relay, sockets } = shared;

    it('records the lease holder’s trades and market; after its SIGKILL the other records on, with one marked gap', async () => {
      const market = shared.sim.market.activeMarketIds()[0]!;
      const inspector = new Redis(shared.redisUrl);
      sockets.push({ close: () => inspector.disconnect() });
      const leaseOf = async (channel: string) =>
        (await inspector.get(recordingLeaseKey(streamKey(channel, market)))) ?? '';
      const subscribe = async (at: ChildRelay) => {
        const client = await TextClient.connect(at);
        sockets.push(client);
        for (const channel of channels) client.send({ op: 'subscribe', channel, markets: [market] });
        return client;
      };

      const a = await relay();
      const viewerA = await subscribe(a);
      const instanceA = await a.instance();
      for (const channel of channels)
        await waitFor(
          `A to hold the recording lease of ${channel}`,
          async () => (await leaseOf(channel)) === instanceA,
        );
      const b = await relay();
      const viewerB = await subscribe(b);
      const instanceB = await b.instance();
      await waitFor('10 market updates at A', () => liveOf(viewerA, 'market').size >= 10, {
        timeoutMs: 15_000,
      });

      // Before the kill: the record through B is A's messages, as A's client received them.
      const epochA = (channel: string) =>
        viewerA.stream().find(({ message }) => message.channel === channel)!.message.epoch;
      await waitFor(
        'the record of market to hold 5 updates',
        async () => (await exported(b, 'market', market)).length >= 6,
        {
          timeoutMs: 15_000,
        },
      );
      for (const channel of channels) {
        const record = (await exported(b, channel, market)).map((text) => ({ text, message: parsed(text) }));
        const live = await liveHaving(
          viewerA,
          channel,
          record.slice(1).map(({ message }) => `${message.epoch}/${message.seq}`),
        );
        expect(record.length).toBeGreaterThan(0);
        expect(record.every(({ message }) => message.epoch === epochA(channel))).toBe(true);
        expect(record[0]!.message.type).toBe('snapshot');
        for (const { text, message } of record.slice(1))
          expect(text).toBe(live.get(`${message.epoch}/${message.seq}`));
      }

      await a.stop('SIGKILL');
      for (const channel of channels)
        await waitFor(
          `B to hold the recording lease of ${channel}`,
          async () => (await leaseOf(channel)) === instanceB,
          {
            timeoutMs: 15_000,
          },
        );
      const atMove = liveOf(viewerB, 'market').size;
      await waitFor(
        '5 market updates at B after the move',
        () => liveOf(viewerB, 'market').size >= atMove + 5,
      );
      const epochB = viewerB.stream().find(({ message }) => message.channel === 'market')!.message
        .epoch as string;
      const lastB = Math.max(
        ...[...liveOf(viewerB, 'market').keys()].map((key) => Number(key.split('/')[1])),
      );
      const record = await waitFor('the record to reach B’s last update', async () => {
        const read = (await exported(b, 'market', market)).map(parsed);
        return read.some((message) => message.epoch === epochB && message.seq >= lastB) && read;
      });
      // One epoch after the other, nothing twice, each run of seq unbroken from its snapshot.
      const positions = record.map((message) => `${message.epoch}/${message.seq}`);
      expect(new Set(positions).size).toBe(positions.length);
      const epochs = record.map((message) => message.epoch).filter((epoch, i, all) => all[i - 1] !== epoch);
      expect(epochs).toEqual([epochA('market'), epochB]);
      for (const epoch of epochs) {
        const run = record.filter((message) => message.epoch === epoch);
        expect(run[0]!.type).toBe('snapshot');
        expect(run.map((message) => message.seq)).toEqual(run.map((_, i) => run[0]!.seq + i));
      }

      // replay through B: A's messages, one marked gap at the hand-over, then B's.
      const reader = await TextClient.connect(b);
      sockets.push(reader);
      reader.send({
        op: 'replay',
        id: 'r1',
        channel: 'market',
        markets: [market],
        from: record[0]!.rts,
        // Up to the last message exported above: the same messages.
        to: new Date(Date.parse(record.at(-1)!.rts) + 1).toISOString(),
        speed: 'max',
      });
      await reader.answer('replayed', 'r1');
      const replayed = reader.stream('r1').map(({ text }) => text);
      expect(replayed.map((text) => `${parsed(text).epoch}/${parsed(text).seq}`)).toEqual(positions);
      const liveA = liveOf(viewerA, 'market');
      const updates = replayed.filter((text) => parsed(text).type === 'update');
      // The record was read after B's client was: it may hold B's updates that client read since.
      const liveB = await liveHaving(
        viewerB,
        'market',
        updates.map(parsed).flatMap(({ epoch, seq }) => (epoch === epochB ? [`${epoch}/${seq}`] : [])),
      );
      expect(updates.filter((text) => parsed(text).epoch === epochB).length).toBeGreaterThanOrEqual(3);
      expect(updates.filter((text) => parsed(text).epoch !== epochB).length).toBeGreaterThanOrEqual(5);
      for (const text of replayed) {
        const message = parsed(text);
        if (message.type === 'update')
          expect(withoutReplay(text)).toBe(
            (message.epoch === epochB ? liveB : liveA).get(`${message.epoch}/${message.seq}`),
          );
      }
      const gaps = reader.of('replay_gap', 'r1').map(({ message }) => message);
      expect(gaps).toHaveLength(1);
      const handover = record.findIndex((message) => message.epoch === epochB);
      expect(gaps[0]).toMatchObject({
        reason: 'epoch_changed',
        from: record[handover - 1]!.rts,
        to: record[handover]!.rts,
      });

      // since a time before the kill: A's state then, A's recorded updates after it, then B's.
      const sinceAt = record[Math.min(3, handover - 1)]!.rts;
      const since = await TextClient.connect(b);
      sockets.push(since);
      since.send({ op: 'subscribe', id: 's1', channel: 'market', markets: [market], since: sinceAt });
      await waitFor('the since answer to reach B’s epoch', () =>
        since.stream().some(({ message }) => message.epoch === epochB && message.type === 'update'),
      );
      const answer = since.stream().map(({ text }) => parsed(text));
      const atTime = record.filter((message) => message.rts <= sinceAt).at(-1)!;
      expect(answer[0]).toMatchObject({ type: 'snapshot', epoch: epochA('market'), seq: atTime.seq });
      const fromA = answer
        .filter((message) => message.epoch === epochA('market'))
        .map((message) => message.seq);
      expect(fromA).toEqual(fromA.map((_, i) => atTime.seq + i));
    });
  },
);
