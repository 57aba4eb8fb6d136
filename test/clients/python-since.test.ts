/**
 * The Python client's `since` (clients/python/tests/test_since.py) against a relay over the
 * simulator: every trade upstream lists since 30 minutes back announced once, oldest first; an
 * unknown `activity_id` ends its subscription with an error; trades candles since then hold every
 * trade of the range.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installedPythonClient, pythonAvailable, runPytest } from '../support/clients/python-client.ts';
import { type Harness, startHarness } from '../support/harness.ts';

describe.skipIf(!(await pythonAvailable()))('the Python client on trades since', () => {
  let harness: Harness;
  let python: string;

  beforeAll(async () => {
    [python, harness] = await Promise.all([
      installedPythonClient(),
      startHarness({ sim: { markets: 2, tradeFlow: () => undefined }, relay: { pricePollMs: 100 } }),
    ]);
  });

  afterAll(async () => {
    await harness?.stop();
  });

  it('announces every trade since then once, oldest first', async () => {
    const [market, other] = harness.sim.market.activeMarketIds();
    harness.sim.market.printTrades(market!, 120);
    const result = await runPytest(python, ['test_since.py'], {
      MARKET_RELAY_URL: harness.relay.url,
      MARKET_RELAY_UPSTREAM: harness.sim.url,
      MARKET_RELAY_MARKET: market!,
      MARKET_RELAY_OTHER: other!,
    });
    expect(result.code, result.output).toBe(0);
    expect(result.output).not.toMatch(/skipped/);
  });
});
