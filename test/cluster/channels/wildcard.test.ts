/**
 * Wildcard subscriptions in cluster mode (protocol.md "Wildcard subscriptions", docs/cluster.md):
 * each relay follows the cluster-wide catalogue, so a client of either relay joins a market the
 * simulator adds and leaves one it expires, without a new subscribe.
 */
import { describe, expect, it } from 'vitest';
import type { Message } from '../../support/clients/message-recorder.ts';
import { ProtocolClient } from '../../support/clients/protocol-client.ts';
import { redisAvailable } from '../../support/cluster/redis.ts';
import { useRelayProcesses } from '../../support/cluster/relay-processes.ts';
import { waitFor } from '../../support/wait-for.ts';

function announced(client: ProtocolClient, type: 'subscribed' | 'unsubscribed'): string[] {
  return client
    .of(type)
    .filter((message: Message) => message.wildcard === true)
    .flatMap((message) => message.markets as string[]);
}

describe.skipIf(!redisAvailable())('wildcard subscriptions in cluster mode', () => {
  const cluster = useRelayProcesses();

  it('a new market joins and an expired one leaves on every relay', async () => {
    const [first, second] = await cluster.pair();
    const clients = await Promise.all(
      [first!, second!].map(async (at) => {
        const client = await ProtocolClient.connect(at.url);
        cluster.clients.push(client);
        await client.request({ op: 'subscribe', channel: 'price', markets: ['*'] });
        return client;
      }),
    );
    const active = cluster.sim.market.activeMarketIds();
    await waitFor('every active market on both relays', () =>
      clients.every((client) => active.every((market) => client.view('price', market))) ? true : undefined,
    );
    const added = cluster.sim.market.addMarket().id;
    await waitFor("the new market's price on both relays", () =>
      clients.every((client) => client.view('price', added)) ? true : undefined,
    );
    const expiring = active[0]!;
    cluster.sim.market.settle(expiring, 'EXPIRED');
    await waitFor('the expired market left on both relays', () =>
      clients.every((client) => announced(client, 'unsubscribed').includes(expiring)) ? true : undefined,
    );
    for (const client of clients) {
      expect(announced(client, 'subscribed').sort()).toEqual([...active, added].sort());
      expect(client.violations).toEqual([]);
    }
  });
});
