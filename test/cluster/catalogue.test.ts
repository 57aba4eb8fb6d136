/**
 * The catalogue in cluster mode (protocol.md "`markets` data", docs/cluster.md): a market listed
 * upstream reaches the `markets` stream on every relay (the lease holder's response shared, each
 * relay numbering its own stream).
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type SimulatorHandle, startSimulator } from '../../src/sim/server.ts';
import { type ChildRelay, startChildRelay } from '../support/child-relay.ts';
import { ProtocolClient } from '../support/protocol-client.ts';
import { redisAvailable, useRedis } from '../support/redis.ts';
import { waitFor } from '../support/wait-for.ts';

describe.skipIf(!redisAvailable())('markets in cluster mode', () => {
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
    ]);
    relays.push(started);
    return started;
  }

  it('lists a new market on every relay of the cluster', async () => {
    const [first, second] = await Promise.all([relay(), relay()]);
    const watchers = await Promise.all(
      [first!, second!].map(async (at) => {
        const client = await ProtocolClient.connect(at.url);
        clients.push(client);
        await client.request({ op: 'subscribe', channel: 'markets', markets: ['all'] });
        return client;
      }),
    );
    await waitFor('both catalogues', () =>
      watchers.every((c) => c.view('markets', 'all')) ? true : undefined,
    );
    const added = sim.market.addMarket().id;
    const listing = (client: ProtocolClient) =>
      client.of('update').find((update) => Object.hasOwn(update.data as object, added));
    await waitFor('the new market on both relays', () => (watchers.every(listing) ? true : undefined));
    for (const client of watchers) {
      expect(listing(client)!.data).toMatchObject({ [added]: { market_id: added, status: 'ACTIVE' } });
      expect(client.violations).toEqual([]);
    }
  });
});
