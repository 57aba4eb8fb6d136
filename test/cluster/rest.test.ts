/**
 * `rest` streams in cluster mode (protocol.md "`rest` data", docs/cluster.md): the lease holder of a
 * path polls it and shares the body; every relay's stream of it rebuilds what upstream served, each
 * relay numbering its own stream.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type SimulatorHandle, startSimulator } from '../../src/sim/server.ts';
import { type ChildRelay, startChildRelay } from '../support/child-relay.ts';
import { ProtocolClient } from '../support/protocol-client.ts';
import { redisAvailable, useRedis } from '../support/redis.ts';
import { waitFor } from '../support/wait-for.ts';

describe.skipIf(!redisAvailable())('rest in cluster mode', () => {
  const redis = useRedis();
  let sim: SimulatorHandle;
  const relays: ChildRelay[] = [];
  const clients: ProtocolClient[] = [];
  beforeAll(async () => {
    // Manual ticks: the bodies change only when the test says.
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
      '--price-poll-ms=50',
      '--upstream-rps=1000',
      '--lease-ms=600',
    ]);
    relays.push(started);
    return started;
  }

  it('rebuilds the body upstream serves on every relay of the cluster', async () => {
    const [market] = sim.market.activeMarketIds();
    const holders = (await (await fetch(`${sim.url}/api/markets/${market}/holders?type=YES`)).json()) as {
      holders: Array<{ username: string }>;
    };
    const path = `/api/users/${holders.holders[0]!.username}/positions?include_closed=true`;
    const [first, second] = await Promise.all([relay(), relay()]);
    const watchers = await Promise.all(
      [first!, second!].map(async (at) => {
        const client = await ProtocolClient.connect(at.url);
        clients.push(client);
        const answer = await client.request({ op: 'subscribe', channel: 'rest', paths: [path] });
        expect(answer).toMatchObject({ type: 'subscribed', paths: [path] });
        return client;
      }),
    );
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 5; i++) sim.tick();
      const served = JSON.stringify(await (await fetch(`${sim.url}${path}`)).json());
      await waitFor(`round ${round} on both relays`, () =>
        watchers.every((client) => JSON.stringify(client.view('rest', path)?.state) === served)
          ? true
          : undefined,
      );
    }
    for (const client of watchers) expect(client.violations).toEqual([]);
  });
});
