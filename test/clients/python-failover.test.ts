/**
 * The Python client with two relay URLs: relays of one cluster (over a private redis-server), the
 * client on the first; when the first relay is stopped the client continues on the second and
 * resumes its streams with `recovered: true` (clients/python/tests/test_failover.py), and when a
 * relay drains the client follows its `going_away` to the other relay at the moment it names,
 * resuming the same way (clients/python/tests/test_going_away.py). The pytest side stops or drains
 * a relay through a small control endpoint here, at the moment it chooses.
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
/** The drained relay's window: its one client is told a moment within it. */
const DRAIN_MS = 800;

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
    // The relay the going-away test drains (the failover test stops the first one).
    relays.push(await startClusterRelay(sim.url, redis.server.url, { drainMs: DRAIN_MS }));
    const actions: Record<string, () => Promise<void>> = {
      '/stop-first': () => relays[0]!.close(),
      '/drain-third': () => relays[2]!.drain(),
    };
    control = createServer((request, response) => {
      const stopping = request.method === 'POST' ? actions[request.url ?? ''] : undefined;
      if (stopping !== undefined) {
        stopping().then(
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

  async function pytest(file: string, urls: Relay[]) {
    const response = await fetch(`${relays[1]!.url}/status/markets`);
    const { markets } = (await response.json()) as { markets: { id: string; status: string }[] };
    const market = markets.find((candidate) => candidate.status === 'ACTIVE')!.id;
    const { port } = control.address() as { port: number };
    const result = await runPytest(python, [file], {
      MARKET_RELAY_URLS: urls.map((relay) => relay.url).join(','),
      MARKET_RELAY_CONTROL: `http://127.0.0.1:${port}`,
      MARKET_RELAY_MARKET: market,
      MARKET_RELAY_DRAIN_MS: String(DRAIN_MS),
    });
    expect(result.code, result.output).toBe(0);
    expect(result.output).toMatch(/1 passed/);
  }

  it('continues on the second relay with recovered: true when the first is stopped', async () => {
    await pytest('test_failover.py', [relays[0]!, relays[1]!]);
  });

  it('follows going_away from a draining relay to the other one, resuming every stream', async () => {
    await pytest('test_going_away.py', [relays[2]!, relays[1]!]);
  });
});
