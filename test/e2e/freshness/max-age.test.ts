/**
 * The maximum age (docs/scheduler.md): what the relay says when its budget cannot keep it. Each
 * scheduler keeping it is max-age-freshness.test.ts and max-age-round-robin.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { ProtocolClient } from '../../support/clients/protocol-client.ts';
import { useHarness } from '../../support/harness.ts';
import { waitFor } from '../../support/wait-for.ts';

describe('maximum age', () => {
  const { opened, start } = useHarness();

  it('says so on /health and /metrics when the budget cannot keep it', async () => {
    const harness = await start({
      sim: { markets: 40, tickMs: 100 },
      // Every stream within 2 s needs about 27 requests/s; the budget is 4.5.
      relay: { bookPollMs: 50, upstreamRps: 5, maxAgeMs: 2_000 },
    });
    const markets = harness.sim.market.marketIds();
    const client = await ProtocolClient.connect(harness.relay.url);
    opened.push(client);
    await client.request({ op: 'subscribe', channel: 'book', markets });
    const health = async () =>
      (await (await fetch(`${harness.relay.url}/health`)).json()) as {
        status: string;
        freshness: {
          maxAgeKept: boolean;
          oldestAgeMs: number;
          pollsPerSecond: { achieved: number; budget: number };
        };
      };
    const report = await waitFor('the maximum age reported as not kept', async () => {
      const body = await health();
      return body.freshness.oldestAgeMs > 2_000 && !body.freshness.maxAgeKept ? body : undefined;
    });
    expect(report.status).toBe('ok'); // still serving: the relay says what it cannot promise
    expect(report.freshness.pollsPerSecond.budget).toBe(4.5);
    expect(report.freshness.pollsPerSecond.achieved).toBeLessThanOrEqual(4.5 + 1);
    const metrics = await (await fetch(`${harness.relay.url}/metrics`)).text();
    expect(metrics).toMatch(/^market_relay_max_age_kept 0$/m);
    expect(metrics).toMatch(/^market_relay_polls_per_second\{which="requested"\} 800$/m);
    expect(metrics).toMatch(/^market_relay_confirmation_age_seconds_bucket\{le="0.1",kind="book"\}/m);
    // Streams past their maximum age say so.
    await waitFor('a stale stream', () =>
      client.of('status').find((status) => status.reason === 'not confirmed within the maximum age'),
    );
  });
});
