/**
 * A 429 lowers the rate (docs/scheduler.md "Rate limits"): with the simulator answering a third of
 * requests 429 `Retry-After: 1`, the relay sends no more than its polls ask for (a poll is never
 * retried within itself), no target is asked twice within its poll interval unless a Retry-After
 * had passed, the budget's rate is cut, and the 429s show in /health and /metrics.
 */
import { describe, expect, it } from 'vitest';
import type { Channel } from '../../../packages/protocol/src/protocol/messages.ts';
import type { SimRequestLogEntry } from '../../../src/sim/admin.ts';
import { ProtocolClient } from '../../support/clients/protocol-client.ts';
import { useHarness } from '../../support/harness.ts';
import { waitFor } from '../../support/wait-for.ts';

const POLL_MS = 500;
/** The simulator logs arrival, the relay its send: a loaded machine may deliver two sends closer. */
const JITTER_MS = 60;

/** One poll target per request: its path, the market of a book, the batch of a price poll. */
function targetOf(request: SimRequestLogEntry): string {
  return `${request.method} ${request.path} ${request.query.market_id ?? ''} ${JSON.stringify(request.body ?? '')}`;
}

describe('a rate-limited upstream', () => {
  const fixture = useHarness();

  it('gets no retries, no request within a poll interval of the last, and a lower rate', async () => {
    const { sim, relay } = await fixture.start({
      sim: { markets: 4, tickMs: 100 },
      relay: { bookPollMs: POLL_MS, pricePollMs: POLL_MS, upstreamRps: 100, tuning: { upstreamRetries: 2 } },
    });
    const client = await ProtocolClient.connect(relay.url);
    fixture.opened.push(client);
    const markets = sim.market.activeMarketIds().slice(0, 3);
    const streams: [Channel, string[]][] = [
      ['book', markets],
      ['price', markets],
      ['market', markets],
      ['oracle', [sim.market.tokens[0]!.oracleFeedId]],
    ];
    for (const [channel, ids] of streams) await client.request({ op: 'subscribe', channel, markets: ids });
    await waitFor('every snapshot', () =>
      streams.every(([channel, ids]) => ids.every((id) => client.view(channel, id) !== undefined)),
    );

    sim.clearRequests();
    sim.setFaults({ rateLimitRate: 1 / 3 });
    const polled = (): SimRequestLogEntry[] => sim.requests.filter((request) => request.path !== '/health');
    await waitFor('ten 429s', () => polled().filter((request) => request.status === 429).length >= 10, {
      timeoutMs: 8_000,
    });
    const requests = polled();

    // 3 books, 3 market records, 1 oracle feed and 1 price batch: 8 targets every 500 ms at most.
    const spanMs = requests.at(-1)!.at - requests[0]!.at;
    expect(requests.length).toBeLessThanOrEqual(Math.ceil((8 * spanMs) / POLL_MS) + 8);
    const previous = new Map<string, SimRequestLogEntry>();
    for (const request of requests) {
      const before = previous.get(targetOf(request));
      previous.set(targetOf(request), request);
      if (before === undefined) continue;
      // After a 429 the next request waits its Retry-After (1 s), otherwise a poll interval.
      const leastMs = before.status === 429 ? 1_000 : POLL_MS;
      expect(request.at - before.at, targetOf(request)).toBeGreaterThanOrEqual(leastMs - JITTER_MS);
    }

    const health = await (await fetch(`${relay.url}/health`)).json();
    expect(health.upstream.rateLimited.total).toBeGreaterThanOrEqual(10);
    expect(health.upstream.rateLimited.limitRps).toBeLessThan(100 * 0.9);
    const metrics = await (await fetch(`${relay.url}/metrics`)).text();
    expect(metrics).toMatch(/market_relay_upstream_requests_total\{[^}]*outcome="rate_limited"[^}]*\} [1-9]/);
    expect(metrics).toMatch(/market_relay_upstream_rate_limit_rps [0-9.]*[1-9]/);
  });
});
