/**
 * Per-stream freshness in cluster mode (protocol.md "Freshness of a quiet stream"): a quiet stream
 * polled by one relay of the cluster is confirmed on every relay, with the same epoch and seq.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type SimulatorHandle, startSimulator } from '../../src/sim/server.ts';
import { type ChildRelay, startChildRelay } from '../support/child-relay.ts';
import { ProtocolClient } from '../support/protocol-client.ts';
import { redisAvailable, useRedis } from '../support/redis.ts';
import { waitFor } from '../support/wait-for.ts';

describe.skipIf(!redisAvailable())('confirmed in cluster mode', () => {
  const redis = useRedis();
  let sim: SimulatorHandle;
  const relays: ChildRelay[] = [];
  const clients: ProtocolClient[] = [];
  beforeAll(async () => {
    // No ticks: the data never changes.
    sim = await startSimulator({ markets: 2, seed: 3, tickMs: 0 });
    return async () => {
      await sim.close();
    };
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
    await Promise.all(relays.splice(0).map((relay) => relay.stop('SIGKILL')));
  });

  async function relay(): Promise<ChildRelay> {
    const started = await startChildRelay([
      `--upstream=${sim.url}`,
      `--redis=${redis.server.url}`,
      '--book-poll-ms=50',
      '--upstream-rps=1000',
      '--lease-ms=600',
      '--confirm-ms=100',
    ]);
    relays.push(started);
    return started;
  }

  it('confirms a quiet book on the relay that polls it and on the one that follows', async () => {
    const market = sim.market.marketIds()[0]!;
    const [first, second] = await Promise.all([relay(), relay()]);
    const watchers = await Promise.all(
      [first!, second!].map(async (at) => {
        const client = await ProtocolClient.connect(at.url);
        clients.push(client);
        await client.request({ op: 'subscribe', channel: 'book', markets: [market] });
        return client;
      }),
    );
    await waitFor('two confirmations on each relay', () =>
      watchers.every((client) => client.of('confirmed').length >= 2) ? true : undefined,
    );
    const snapshots = watchers.map((client) => client.of('snapshot')[0]!);
    expect(snapshots[1]!.epoch).toBe(snapshots[0]!.epoch);
    for (const client of watchers) {
      const times = client.of('confirmed').map((message) => String(message.confirmed));
      expect([...times].sort()).toEqual(times);
      expect(new Set(times).size).toBe(times.length);
      for (const message of client.of('confirmed'))
        expect(message).toMatchObject({ market, epoch: snapshots[0]!.epoch, seq: snapshots[0]!.seq });
      expect(client.of('update')).toEqual([]);
    }
  });
});
