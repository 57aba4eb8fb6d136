/**
 * The REST front's upstream requests are inside the upstream budget and the scheduler
 * (docs/operations.md "REST front", docs/scheduler.md "One-off requests"), counted at the
 * simulator: a flood of distinct REST requests (nothing to coalesce) while the subscribed books
 * want more than the whole budget gets its share of the budget, the polls keep the rest, and
 * what cannot be served in time is answered 503 `upstream_busy` without reaching upstream.
 */
import { describe, expect, it } from 'vitest';
import { ProtocolClient } from '../support/clients/protocol-client.ts';
import { useHarness } from '../support/harness.ts';
import { waitFor } from '../support/wait-for.ts';

const RPS = 20;

describe('REST front inside the upstream budget', () => {
  const { opened, start } = useHarness();

  it('takes its share of the budget during a flood, the polls of subscribed books keep the rest', async () => {
    const harness = await start({
      sim: { markets: 10 },
      relay: {
        upstreamRps: RPS,
        // Ten books at 20 ms each want 500 requests a second: the polls alone would take it all.
        bookPollMs: 20,
        tuning: { restCacheTtlMs: 0, restBudgetPercent: 25, restQueue: 1_000, upstreamTimeoutMs: 3_000 },
      },
    });
    const markets = harness.sim.market.marketIds();
    const watcher = await ProtocolClient.connect(harness.relay.url);
    opened.push(watcher);
    await watcher.request({ op: 'subscribe', channel: 'book', markets, depth: 10 });
    await waitFor('every snapshot', () => watcher.of('snapshot').length === markets.length);
    await harness.relay.knownMarkets.refresh();

    const startedAt = Date.now();
    // 300 different requests: each one costs an upstream request, none is coalesced.
    const answers = await Promise.all(
      Array.from({ length: 300 }, async (_, i) => {
        const response = await fetch(`${harness.relay.url}/api/markets?limit=1&offset=${i}`);
        return {
          offset: String(i),
          status: response.status,
          retryAfter: response.headers.get('retry-after'),
        };
      }),
    );
    const seconds = (Date.now() - startedAt) / 1000;
    const during = harness.sim.requests.filter((entry) => entry.at >= startedAt);
    const front = during.filter((entry) => entry.path === '/api/markets' && entry.query.offset !== undefined);
    const polls = during.filter((entry) => entry.path === '/clob/orderbook');

    const served = answers.filter((answer) => answer.status === 200);
    const busy = answers.filter((answer) => answer.status === 503);
    expect(served.length + busy.length).toBe(300);
    // Each answered from its own upstream request (a retry after a lost answer asks again, so count
    // the requests asked, not the asks); the rest never reached upstream.
    const asked = new Set(front.map((entry) => entry.query.offset));
    expect([...asked].sort()).toEqual(served.map((answer) => answer.offset).sort());
    expect(busy.every((answer) => answer.retryAfter === '1')).toBe(true);
    expect(busy.length).toBeGreaterThan(0);
    // Inside the budget all together (plus the first bursts).
    expect(during.length).toBeLessThanOrEqual(RPS * seconds + RPS);
    // A quarter of the polling budget for the front, the rest for the polls: far from starved.
    expect(front.length).toBeGreaterThan(0);
    expect(polls.length).toBeGreaterThanOrEqual(2 * front.length);
    expect(front.length).toBeLessThanOrEqual(0.25 * 0.9 * RPS * seconds + 0.25 * 0.9 * RPS);
  });
});
