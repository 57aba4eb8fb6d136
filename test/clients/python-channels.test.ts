/**
 * The Python client (clients/python) on the catalogue, public paths as `rest` streams, candles,
 * wildcards, every book depth and per-stream freshness: its pytest suite keeps each verified against
 * a relay over the ticking simulator, follows every active market with a `"*"`, and sees a quiet stream confirmed (the
 * relay confirms every 50 ms here); the wildcard's reconnect runs against a scripted relay.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installedPythonClient, pythonAvailable, runPytest } from '../support/clients/python-client.ts';
import { type Harness, startHarness } from '../support/harness.ts';

describe.skipIf(!(await pythonAvailable()))(
  'the Python client on markets, rest, candles and wildcards',
  () => {
    let harness: Harness;
    let python: string;

    beforeAll(async () => {
      [python, harness] = await Promise.all([
        installedPythonClient(),
        startHarness({ sim: { markets: 3, tickMs: 20 }, relay: { tuning: { confirmMs: 50 } } }),
      ]);
    });

    afterAll(async () => {
      await harness?.stop();
    });

    it('keeps the catalogue, public paths and candles verified, every active market by wildcard, and a quiet stream confirmed', async () => {
      const [market] = harness.sim.market.activeMarketIds();
      const result = await runPytest(
        python,
        [
          'test_live_channels.py',
          'test_json_channels.py',
          'test_wildcards_fake_relay.py',
          'test_book_depths.py',
        ],
        {
          MARKET_RELAY_URL: harness.relay.url,
          MARKET_RELAY_UPSTREAM: harness.sim.url,
          MARKET_RELAY_MARKET: market!,
        },
      );
      expect(result.code, result.output).toBe(0);
      expect(result.output).not.toMatch(/skipped/);
    });
  },
);
