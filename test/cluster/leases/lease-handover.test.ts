/**
 * Leases moving between relays (docs/cluster.md "How leases move"), on a Redis Cluster of three
 * primaries with every book subscribed on every relay: a relay that joins takes its share while no
 * client of the others sees a gap or a snapshot; a relay that shuts down gives its share to the
 * others and its client resumes on another relay with `recovered: true` and no gap.
 *
 * Each wait is for the split rendezvous hashing names (test/support/cluster/balanced-relays.ts), however long
 * a loaded machine takes to get there, never for a number of leases within a time.
 */
import { describe, expect, it } from 'vitest';
import { ProtocolClient } from '../../support/clients/protocol-client.ts';
import { useBalancedRelays } from '../../support/cluster/balanced-relays.ts';
import { redisClusterAvailable } from '../../support/cluster/redis.ts';
import { waitFor } from '../../support/wait-for.ts';

describe.skipIf(!redisClusterAvailable())('leases moving between relays', () => {
  const cluster = useBalancedRelays();
  const snapshots = (client: ProtocolClient) =>
    client.messages.filter((message) => message.type === 'snapshot').length;
  it('gives a joining relay its share with no gap or snapshot for any client of the others', async () => {
    const first = [await cluster.relayWithClient(), await cluster.relayWithClient()];
    await cluster.evenSplit('two relays holding their shares of the books');
    await waitFor('every book on both clients', () =>
      first.every(({ client }) => cluster.markets.every((market) => client.view('book', market))),
    );
    const before = first.map(({ client }) => snapshots(client));
    await cluster.relayWithClient();
    await cluster.evenSplit('the joining relay to take its share');
    // Every book, moved or not, reaches the clients of the first two as upstream has it now.
    const upstreamNow = await cluster.upstreamNow();
    await waitFor('every book as upstream has it now on the clients of the first two', () =>
      first.every(({ client }) =>
        cluster.markets.every((market, m) => client.view('book', market)!.ts >= upstreamNow[m]!),
      ),
    );
    expect(first.map(({ client }) => snapshots(client))).toEqual(before);
    for (const { client } of first) expect(client.violations).toEqual([]);
  });

  it("gives a stopped relay's share to the others; its client resumes on another relay, recovered, no gap", async () => {
    const trio = [
      await cluster.relayWithClient(),
      await cluster.relayWithClient(),
      await cluster.relayWithClient(),
    ];
    await cluster.evenSplit('three relays holding their shares of the books');
    const [leaving, staying] = [trio[0]!, trio[1]!];
    await waitFor('every book on the leaving client', () =>
      cluster.markets.every((market) => leaving.client.view('book', market)),
    );
    cluster.relays.splice(cluster.relays.indexOf(leaving.relay), 1);
    await leaving.relay.close(); // the shutdown SIGTERM runs: leases released, roster left
    await cluster.evenSplit('the two others to hold every book, each its share');
    const moved = await ProtocolClient.connect(staying.relay.url);
    cluster.clients.push(moved);
    for (const [key, view] of leaving.client.streams) moved.streams.set(key, { ...view, updates: 0 });
    const resume = Object.fromEntries(
      cluster.markets.map((market) => {
        const view = moved.view('book', market)!;
        return [market, { epoch: view.epoch, seq: view.seq }];
      }),
    );
    const answer = await moved.request({
      op: 'subscribe',
      channel: 'book',
      markets: cluster.markets,
      resume,
    });
    expect(Object.values(answer.recovered as Record<string, boolean>).every((recovered) => recovered)).toBe(
      true,
    );
    const upstreamNow = await cluster.upstreamNow();
    await waitFor('every book as upstream has it now on the moved client', () =>
      cluster.markets.every((market, m) => moved.view('book', market)!.ts >= upstreamNow[m]!),
    );
    expect(moved.of('snapshot')).toEqual([]);
    expect([...leaving.client.violations, ...moved.violations]).toEqual([]);
  });
});
