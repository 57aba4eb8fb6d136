/**
 * The SDK's `subscribeCandles(market, { interval, source, since })` against a relay (docs/client.md
 * "History since a time"): the `history` event and the state together hold every trade of the
 * range, the state checked against each checksum; a `since` the relay would refuse (on a
 * `probability` stream, an `activity_id`, out of bounds) throws before anything is sent.
 */
import { describe, expect, it } from 'vitest';
import type { Candle, TradesCandle } from '../../../packages/protocol/src/protocol/messages.ts';
import { upstreamListing } from '../../support/channels/trades.ts';
import { useHarness } from '../../support/harness.ts';
import { waitFor } from '../../support/wait-for.ts';
import { connectRecorded } from '../sdk-support.ts';

const MINUTE = 60_000;

describe('client SDK: candles since', () => {
  const { opened, start } = useHarness();

  it('brings the older final candles as one history event; with the state, every trade of the range', async () => {
    const harness = await start({
      sim: { markets: 2, tradeFlow: () => undefined },
      relay: { pricePollMs: 100 },
    });
    const [market] = harness.sim.market.activeMarketIds() as [string];
    harness.sim.market.printTrades(market, 120);
    const since = new Date(Date.now() - 30 * MINUTE);
    const { client, errors } = connectRecorded(harness.relay.url, { encoding: 'json' });
    opened.push(client);
    // A probability candles stream's since is for the relay to answer (from its record): not refused here.
    for (const refused of [
      { source: 'trades', since: 'an-activity-id' },
      { source: 'trades', since: new Date(Date.now() + MINUTE) },
    ] as const)
      expect(() => client.subscribeCandles(market, { interval: '1m', ...refused })).toThrow(/since/);
    const candles = client.subscribeCandles(market, { interval: '1m', source: 'trades', since });
    const histories: Candle[][] = [];
    candles.on('history', (history: Candle[]) => histories.push(history));
    await waitFor('the history', () => candles.status === 'live');
    expect(histories).toHaveLength(1);
    const from = Math.floor(since.getTime() / MINUTE) * MINUTE;
    const listed = (await upstreamListing(harness.sim, market)).filter(
      (entry) => Date.parse(entry.activity_timestamp) >= from,
    );
    const held = [...histories[0]!, ...candles.state!].filter((candle) => Date.parse(candle.start) >= from);
    expect(held.reduce((sum, candle) => sum + (candle as TradesCandle).trades, 0)).toBe(listed.length);
    expect(listed.length).toBeGreaterThan(100);
    expect(errors).toEqual([]);
  });
});
