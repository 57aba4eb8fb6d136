/**
 * Staleness is about answers, not waiting (docs/operations.md "Freshness"): with every upstream
 * answer 2 s late, 1 s polls and the default 3 polls of grace, every poll still succeeds within the
 * 5 s upstream timeout, so no stream of any channel may say `stale`. The 60 s run of the same set-up
 * is `node --import tsx bench/upstream-signals.ts` (docs/benchmarks.md).
 */
import { describe, expect, it } from 'vitest';
import type { Channel, TradesData } from '../../../packages/protocol/src/protocol/messages.ts';
import { ProtocolClient } from '../../support/clients/protocol-client.ts';
import { useHarness } from '../../support/harness.ts';
import { waitFor } from '../../support/wait-for.ts';

/** More than one activity page (100): the poll that reads them takes two 2 s requests. */
const BURST = 150;

describe('a slow upstream', () => {
  const fixture = useHarness();

  it('keeps every channel live while each answer takes 2 s, within the timeout', async () => {
    const { sim, relay } = await fixture.start({
      sim: { markets: 4, tickMs: 200 },
      relay: {
        bookPollMs: 1_000,
        pricePollMs: 1_000,
        upstreamRps: 50,
        // The relay's defaults, not the harness's test-speed grace.
        tuning: { staleAfterFactor: 3, upstreamTimeoutMs: 5_000 },
      },
    });
    const client = await ProtocolClient.connect(relay.url);
    fixture.opened.push(client);
    const markets = sim.market.activeMarketIds().slice(0, 2);
    const feed = sim.market.tokens[0]!.oracleFeedId;
    const streams: [Channel, string[]][] = [
      ['book', markets],
      ['price', markets],
      ['trades', markets],
      ['market', markets],
      ['orders', markets],
      ['probabilities', ['all']],
      ['oracle', [feed]],
      ['markets', ['all']],
    ];
    for (const [channel, ids] of streams) await client.request({ op: 'subscribe', channel, markets: ids });
    await waitFor('every snapshot', () =>
      streams.every(([channel, ids]) => ids.every((id) => client.view(channel, id) !== undefined)),
    );

    sim.setFaults({ latencyMs: 2_000 });
    sim.clearRequests();
    // The slowest poll there is: a trades walk of two slow pages, longer than 3 poll intervals.
    const hot = markets[0]!;
    const seenBefore = client.messages.length;
    const deliveredSince = () =>
      client.messages
        .slice(seenBefore)
        .filter(
          (message) => message.type === 'update' && message.channel === 'trades' && message.market === hot,
        )
        .reduce((sum, update) => sum + (update.data as TradesData).trades.length, 0);
    expect(sim.market.printTrades(hot, BURST)).toBe(BURST);
    await waitFor('the burst delivered by a slow two-page walk', () => deliveredSince() >= BURST, {
      everyMs: 50,
    });

    expect(client.of('status').filter((status) => status.state !== 'live')).toEqual([]);
    const slowPages = sim.requests.filter((request) => request.path.endsWith('/activity'));
    expect(slowPages.some((request) => request.query.offset === '100')).toBe(true);
    // The polls went on, slowly, and succeeded: this is a slow upstream, not an idle relay.
    const answered = sim.requests.filter((request) => request.status === 200);
    expect(answered.length).toBeGreaterThan(streams.length);
    expect(client.violations).toEqual([]);
  });
});
