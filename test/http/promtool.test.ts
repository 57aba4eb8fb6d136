/**
 * A live relay's `GET /metrics`, with every kind of series present (counters by label, histograms,
 * a closed connection, the history store's), passes Prometheus' own checker.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProtocolClient } from '../support/clients/protocol-client.ts';
import { type Harness, startHarness } from '../support/harness.ts';
import { promtoolCheck, runPromtoolTests } from '../support/promtool.ts';
import { waitFor } from '../support/wait-for.ts';

describe.runIf(runPromtoolTests)('promtool check metrics', () => {
  let harness: Harness;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'promtool-history-'));
  beforeAll(async () => {
    harness = await startHarness({
      relay: { history: { store: 'embedded', dataDir, retentionMs: 3_600_000, maxBytes: 1024 ** 3 } },
    });
    const [market] = harness.sim.market.activeMarketIds();
    const client = await ProtocolClient.connect(harness.relay.url);
    await client.request({ op: 'subscribe', id: 1, channel: 'book', markets: [market], depth: 10 });
    await client.request({ op: 'subscribe', id: 2, channel: 'nope', markets: [market] });
    await waitFor('a snapshot', () => client.of('snapshot').length > 0);
    await client.close();
  });
  afterAll(async () => {
    await harness.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("accepts the relay's metrics", async () => {
    const text = await waitFor('the close to be counted', async () => {
      const scraped = await (await fetch(`${harness.relay.url}/metrics`)).text();
      return scraped.includes('market_relay_connections_closed_total{') &&
        scraped.includes('market_relay_history_write_failures_total')
        ? scraped
        : undefined;
    });
    expect(await promtoolCheck(text)).toEqual({ code: 0, output: '' });
  });
});
