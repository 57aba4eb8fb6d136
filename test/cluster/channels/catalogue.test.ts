/**
 * The catalogue in cluster mode (protocol.md "`markets` data", docs/cluster.md): a market listed
 * upstream reaches the `markets` stream on every relay (the lease holder's response shared, each
 * relay numbering its own stream).
 */
import { describe, expect, it } from 'vitest';
import { ProtocolClient } from '../../support/clients/protocol-client.ts';
import { redisAvailable } from '../../support/cluster/redis.ts';
import { useRelayProcesses } from '../../support/cluster/relay-processes.ts';
import { waitFor } from '../../support/wait-for.ts';

describe.skipIf(!redisAvailable())('markets in cluster mode', () => {
  const cluster = useRelayProcesses();

  it('lists a new market on every relay of the cluster', async () => {
    const [first, second] = await cluster.pair();
    const watchers = await Promise.all(
      [first!, second!].map(async (at) => {
        const client = await ProtocolClient.connect(at.url);
        cluster.clients.push(client);
        await client.request({ op: 'subscribe', channel: 'markets', markets: ['all'] });
        return client;
      }),
    );
    await waitFor('both catalogues', () =>
      watchers.every((c) => c.view('markets', 'all')) ? true : undefined,
    );
    const added = cluster.sim.market.addMarket().id;
    const listing = (client: ProtocolClient) =>
      client.of('update').find((update) => Object.hasOwn(update.data as object, added));
    await waitFor('the new market on both relays', () => (watchers.every(listing) ? true : undefined));
    for (const client of watchers) {
      expect(listing(client)!.data).toMatchObject({ [added]: { market_id: added, status: 'ACTIVE' } });
      expect(client.violations).toEqual([]);
    }
  });
});
