/**
 * `rest` streams in cluster mode (protocol.md "`rest` data", docs/cluster.md): the lease holder of a
 * path polls it and shares the body; every relay's stream of it rebuilds what upstream served, each
 * relay numbering its own stream.
 */
import { describe, expect, it } from 'vitest';
import { ProtocolClient } from '../../support/clients/protocol-client.ts';
import { redisAvailable } from '../../support/cluster/redis.ts';
import { useRelayProcesses } from '../../support/cluster/relay-processes.ts';
import { waitFor } from '../../support/wait-for.ts';

describe.skipIf(!redisAvailable())('rest in cluster mode', () => {
  const cluster = useRelayProcesses();

  it('rebuilds the body upstream serves on every relay of the cluster', async () => {
    const [market] = cluster.sim.market.activeMarketIds();
    const holders = (await (
      await fetch(`${cluster.sim.url}/api/markets/${market}/holders?type=YES`)
    ).json()) as {
      holders: Array<{ username: string }>;
    };
    const path = `/api/users/${holders.holders[0]!.username}/positions?include_closed=true`;
    const [first, second] = await cluster.pair();
    const watchers = await Promise.all(
      [first!, second!].map(async (at) => {
        const client = await ProtocolClient.connect(at.url);
        cluster.clients.push(client);
        const answer = await client.request({ op: 'subscribe', channel: 'rest', paths: [path] });
        expect(answer).toMatchObject({ type: 'subscribed', paths: [path] });
        return client;
      }),
    );
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 5; i++) cluster.sim.tick();
      const served = JSON.stringify(await (await fetch(`${cluster.sim.url}${path}`)).json());
      await waitFor(`round ${round} on both relays`, () =>
        watchers.every((client) => JSON.stringify(client.view('rest', path)?.state) === served)
          ? true
          : undefined,
      );
    }
    for (const client of watchers) expect(client.violations).toEqual([]);
  });
});
