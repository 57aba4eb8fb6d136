/**
 * The Python client's `interval` option (clients/python/tests/test_interval.py) against a relay over
 * the ticking simulator: a paced book receives a snapshot, then conflated updates, checksum-verified, with no resync.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installedPythonClient, pythonAvailable, runPytest } from '../support/clients/python-client.ts';
import { type Harness, startHarness } from '../support/harness.ts';

describe.skipIf(!(await pythonAvailable()))('the Python client on paced subscriptions', () => {
  let harness: Harness;
  let python: string;

  beforeAll(async () => {
    [python, harness] = await Promise.all([
      installedPythonClient(),
      startHarness({ sim: { markets: 2, tickMs: 20 } }),
    ]);
  });

  afterAll(async () => {
    await harness?.stop();
  });

  it('keeps a paced book verified from conflated updates', async () => {
    const [market] = harness.sim.market.activeMarketIds();
    const result = await runPytest(python, ['test_interval.py'], {
      MARKET_RELAY_URL: harness.relay.url,
      MARKET_RELAY_MARKET: market!,
    });
    expect(result.code, result.output).toBe(0);
    expect(result.output).not.toMatch(/skipped/);
  });
});
