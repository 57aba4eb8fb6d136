/**
 * The Python client's `threshold` option (clients/python/tests/test_threshold.py) against a relay
 * whose upstream prices the Python test sets through the fake upstream's script path.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Relay } from '../../src/relay-server.ts';
import { type SimulatorHandle, startSimulator } from '../../src/sim/server.ts';
import { installedPythonClient, pythonAvailable, runPytest } from '../support/clients/python-client.ts';
import { startHarnessRelay } from '../support/harness.ts';
import { type ScriptedPrices, startScriptedPrices } from '../support/upstream/scripted-prices.ts';

describe.skipIf(!(await pythonAvailable()))('the Python client on price thresholds', () => {
  let sim: SimulatorHandle;
  let fake: ScriptedPrices;
  let relay: Relay;
  let python: string;
  let market: string;

  beforeAll(async () => {
    [python, sim] = await Promise.all([
      installedPythonClient(),
      startSimulator({ markets: 2, seed: 3, tickMs: 0 }),
    ]);
    [market] = sim.market.activeMarketIds() as [string];
    fake = await startScriptedPrices(sim.url);
    fake.set(market, { best_bid: '0.50000000', best_ask: '0.60000000', midpoint_price: '0.55000000' });
    // Prices polled every 100 ms: the catch-up of a withheld half tick (ten polls) comes a second
    // later, long after the next step of the test.
    relay = await startHarnessRelay(sim, { upstream: fake.url, pricePollMs: 100 });
  });

  afterAll(async () => {
    await relay?.close();
    await fake?.close();
    await sim?.close();
  });

  it('sends whole ticks and the final state, and update changes the threshold', async () => {
    const result = await runPytest(python, ['test_threshold.py'], {
      MARKET_RELAY_URL: relay.url,
      MARKET_RELAY_MARKET: market,
      MARKET_RELAY_SCRIPT_URL: `${fake.url}/script/prices`,
    });
    expect(result.code, result.output).toBe(0);
    expect(result.output).not.toMatch(/skipped/);
  });
});
