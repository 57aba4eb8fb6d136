/**
 * The Python client's `history()` (clients/python/tests/test_history_export.py) against a relay that
 * records into a temporary --data-dir over a moving simulator: the export holds every update the
 * live client verified, as it received it; a refused range raises `history_refused`. Its replay and
 * `since` (clients/python/tests/test_history_relay.py): a replay from inside the recorded book, at
 * "max" and speed 10, and a book and a price since a time, each state as the live client held it;
 * a relay with no record refusing both clearly. Against a scripted relay: python-offline.test.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Relay } from '../../src/relay-server.ts';
import { installedPythonClient, pythonAvailable, runPytest } from '../support/clients/python-client.ts';
import { type Harness, startHarness, startHarnessRelay } from '../support/harness.ts';

describe.skipIf(!(await pythonAvailable()))('the Python client on the history export', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'python-history-'));
  let harness: Harness;
  let plain: Relay;
  let python: string;

  beforeAll(async () => {
    [python, harness] = await Promise.all([
      installedPythonClient(),
      startHarness({
        sim: { markets: 2, tickMs: 20 },
        relay: { history: { store: 'embedded', dataDir, retentionMs: 3_600_000, maxBytes: 1024 ** 3 } },
      }),
    ]);
    plain = await startHarnessRelay(harness.sim);
  });

  afterAll(async () => {
    await plain?.close();
    await harness?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('reads the recorded book back as the live client received it', async () => {
    const [market] = harness.sim.market.activeMarketIds();
    const result = await runPytest(python, ['test_history_export.py'], {
      MARKET_RELAY_URL: harness.relay.url,
      MARKET_RELAY_MARKET: market!,
    });
    expect(result.code, result.output).toBe(0);
    expect(result.output).not.toMatch(/skipped/);
  });

  it('replays the recorded book and reads it since a time as the live client held it, at every step', async () => {
    const [market] = harness.sim.market.activeMarketIds();
    const result = await runPytest(python, ['test_history_relay.py'], {
      MARKET_RELAY_URL: harness.relay.url,
      MARKET_RELAY_PLAIN_URL: plain.url,
      MARKET_RELAY_MARKET: market!,
    });
    expect(result.code, result.output).toBe(0);
    expect(result.output).not.toMatch(/skipped/);
  });
});
