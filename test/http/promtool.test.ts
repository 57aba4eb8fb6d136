/**
 * A live relay's `GET /metrics`, with every kind of series present (counters by label, histograms,
 * a closed connection), passes Prometheus' own checker.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProtocolClient } from '../support/clients/protocol-client.ts';
import { type Harness, startHarness } from '../support/harness.ts';
import { promtoolCheck, runPromtoolTests } from '../support/promtool.ts';
import { waitFor } from '../support/wait-for.ts';

describe.runIf(runPromtoolTests)('promtool check metrics', () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness();
    const [market] = harness.sim.market.activeMarketIds();
    const client = await ProtocolClient.connect(harness.relay.url);
    await client.request({ op: 'subscribe', id: 1, channel: 'book', markets: [market], depth: 10 });
    await client.request({ op: 'subscribe', id: 2, channel: 'nope', markets: [market] });
    await waitFor('a snapshot', () => client.of('snapshot').length > 0);
    await client.close();
  });
  afterAll(() => harness.stop());

  it("accepts the relay's metrics", async () => {
    const text = await waitFor('the close to be counted', async () => {
      const scraped = await (await fetch(`${harness.relay.url}/metrics`)).text();
      return scraped.includes('market_relay_connections_closed_total{') ? scraped : undefined;
    });
    expect(await promtoolCheck(text)).toEqual({ code: 0, output: '' });
  });
});
