/**
 * The Python client with two relay URLs: two relays of one cluster (over a private redis-server),
 * the client on the first; when the first relay is stopped the client continues on the second and
 * resumes its streams with `recovered: true` (clients/python/tests/test_failover.py). The pytest
 * side stops the first relay through a small control endpoint here, at the moment it chooses.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Relay } from '../../src/relay-server.ts';
import { type SimulatorHandle, startSimulator } from '../../src/sim/server.ts';
import { installedPythonClient, pythonAvailable, runPytest } from '../support/clients/python-client.ts';
import { startClusterRelay } from '../support/cluster/cluster-relays.ts';
import { redisAvailable, useRedis } from '../support/cluster/redis.ts';

const runnable = redisAvailable() && (await pythonAvailable());

describe.skipIf(!runnable)('the Python client fails over between relays', () => {
  const redis = useRedis();
  let sim: SimulatorHandle;
  let python: string;
  const relays: Relay[] = [];
  let control: Server;

  beforeAll(async () => {
    [python, sim] = await Promise.all([
      installedPythonClient(),
      startSimulator({ markets: 4, seed: 3, tickMs: 20 }),
    ]);
    for (let i = 0; i < 2; i++) relays.push(await startClusterRelay(sim.url, redis.server.url));
    control = createServer((request, response) => {
      if (request.method === 'POST' && request.url === '/stop-first') {
        relays[0]!.close().then(
          () => response.end('stopped'),
          (error: unknown) => {
            response.statusCode = 500;
            response.end(String(error));
          },
        );
        return;
      }
      response.statusCode = 404;
      response.end();
    });
    control.listen(0, '127.0.0.1');
    await once(control, 'listening');
  });

  afterAll(async () => {
    control?.close();
    await Promise.all(relays.map((relay) => relay.close()));
    await sim?.close();
  });

  it('continues on the second relay with recovered: true when the first is stopped', async () => {
    const response = await fetch(`${relays[0]!.url}/status/markets`);
    const { markets } = (await response.json()) as { markets: { id: string; status: string }[] };
    const market = markets.find((candidate) => candidate.status === 'ACTIVE')!.id;
    const { port } = control.address() as { port: number };
    const result = await runPytest(python, ['test_failover.py'], {
      MARKET_RELAY_URLS: relays.map((relay) => relay.url).join(','),
      MARKET_RELAY_CONTROL: `http://127.0.0.1:${port}`,
      MARKET_RELAY_MARKET: market,
    });
    expect(result.code, result.output).toBe(0);
    expect(result.output).toMatch(/1 passed/);
  });
});
