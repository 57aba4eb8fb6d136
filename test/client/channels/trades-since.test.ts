/**
 * The SDK's `subscribeTrades(market, { since })` against a relay (docs/client.md "History since a
 * time"): a `trade` event for every trade upstream lists since then, oldest first, then each live
 * one, each once; a `since` the relay would refuse throws before anything is sent; a history the
 * relay cannot serve (an unknown `activity_id`) is an error and the subscription ends.
 */
import { describe, expect, it } from 'vitest';
import type { TradeEntry } from '../../../packages/protocol/src/protocol/messages.ts';
import { useHarness } from '../../support/harness.ts';
import { waitFor } from '../../support/wait-for.ts';
import { connectRecorded } from '../sdk-support.ts';

const MINUTE = 60_000;

describe('client SDK: trades since', () => {
  const { opened, start } = useHarness();

  it('announces every trade since then, oldest first, then the live ones, each once', async () => {
    const harness = await start({
      sim: { markets: 2, tradeFlow: () => undefined },
      relay: { pricePollMs: 100 },
    });
    const [market] = harness.sim.market.activeMarketIds() as [string];
    harness.sim.market.printTrades(market, 120);
    const since = new Date(Date.now() - 30 * MINUTE);
    const { client, errors } = connectRecorded(harness.relay.url, { encoding: 'json' });
    opened.push(client);
    const trades = client.subscribeTrades(market, { since });
    const announced: string[] = [];
    trades.on('trade', (trade: TradeEntry) => announced.push(trade.activity_id));
    await waitFor('the history', () => trades.status === 'live');
    harness.sim.market.printTrades(market, 30);
    const log = harness.sim.market.market(market)!.trades;
    const newest = log.at(-1)!.id;
    await waitFor(`the live trade ${newest}`, () => announced.includes(newest));
    expect(announced).toEqual(log.filter((trade) => trade.at >= since.getTime()).map((trade) => trade.id));
    expect(announced.length).toBeGreaterThan(150);
    expect(trades.state?.length).toBe(50);
    expect(errors).toEqual([]);
  });

  it('throws on a since no relay takes; one past 24 hours on a relay with no record, or an unknown activity_id, ends the subscription with an error', async () => {
    const harness = await start({
      sim: { markets: 2, tradeFlow: () => undefined },
      relay: { pricePollMs: 100 },
    });
    const [market] = harness.sim.market.activeMarketIds() as [string];
    const { client, errors } = connectRecorded(harness.relay.url, { encoding: 'json' });
    opened.push(client);
    for (const since of [new Date(Date.now() + MINUTE), '2025-06-01T12:00'])
      expect(() => client.subscribeTrades(market, { since })).toThrow(/since/);
    // Past upstream's 24 hours only a recording relay answers: this one (history off) refuses it.
    const longAgo = client.subscribeTrades(market, { since: new Date(Date.now() - 25 * 60 * MINUTE) });
    await waitFor('the refusal', () => longAgo.isClosed);
    const trades = client.subscribeTrades(market, { since: 'no-such-trade' });
    await waitFor('the subscription to end', () => trades.isClosed);
    expect(errors.map((error) => [error.code, error.message])).toEqual([
      ['bad_request', expect.stringMatching(/24 hours/)],
      ['bad_request', expect.stringMatching(/no-such-trade/)],
    ]);
  });
});
