/**
 * Per-stream freshness in cluster mode (protocol.md "Freshness of a quiet stream"): a quiet stream
 * polled by one relay of the cluster is confirmed on every relay, with the same epoch and seq.
 */
import { describe, expect, it } from 'vitest';
import { ProtocolClient } from '../../support/clients/protocol-client.ts';
import { redisAvailable } from '../../support/cluster/redis.ts';
import { useRelayProcesses } from '../../support/cluster/relay-processes.ts';
import { waitFor } from '../../support/wait-for.ts';

describe.skipIf(!redisAvailable())('confirmed in cluster mode', () => {
  const cluster = useRelayProcesses({ relayArgs: ['--confirm-ms=100'] });

  it('confirms a quiet book on the relay that polls it and on the one that follows', async () => {
    const market = cluster.sim.market.marketIds()[0]!;
    const [first, second] = await cluster.pair();
    const watchers = await Promise.all(
      [first!, second!].map(async (at) => {
        const client = await ProtocolClient.connect(at.url);
        cluster.clients.push(client);
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
