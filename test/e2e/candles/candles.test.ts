/**
 * End to end, `candles` (docs/protocol.md "`candles` data"): a plain WebSocket client (JSON and
 * compact) and the SDK get the same candles, checked against each checksum; the backfilled
 * snapshot is upstream's history bucketed by minute; trade candles follow the prints; a stream
 * nobody holds any more costs no upstream request.
 */
import { describe, expect, it } from 'vitest';
import { candlesStreamId } from '../../../packages/protocol/src/channels/candles/streams.ts';
import { COMPACT_SUBPROTOCOL } from '../../../packages/protocol/src/protocol/compact.ts';
import type { CandlesData, ProbabilityCandle } from '../../../packages/protocol/src/protocol/messages.ts';
import { historyResponse } from '../../../src/upstream/schemas.ts';
import { connectRecorded } from '../../client/sdk-support.ts';
import { candlesSince, hourlyCountsMatch, hourStart } from '../../support/channels/hourly-prints.ts';
import { ProtocolClient } from '../../support/clients/protocol-client.ts';
import { useHarness } from '../../support/harness.ts';
import { waitFor } from '../../support/wait-for.ts';

const MINUTE = 60_000;

/** Books frozen and no printed trades but the test's own; polls slow enough for a busy machine. */
const setup = { sim: { markets: 3, tradeFlow: () => undefined }, relay: { pricePollMs: 100 } };

describe('candles end to end', () => {
  const { opened, start } = useHarness();

  it("backfills the snapshot from upstream's history, the same over JSON, compact and the SDK", async () => {
    const harness = await start(setup);
    const market = harness.sim.market.activeMarketIds()[0]!;
    const id = candlesStreamId({ market, interval: '1m', source: 'probability' });
    const json = await ProtocolClient.connect(harness.relay.url);
    const compact = await ProtocolClient.connect(harness.relay.url, {}, [COMPACT_SUBPROTOCOL]);
    opened.push(json, compact);
    for (const client of [json, compact])
      expect(
        await client.request({ op: 'subscribe', channel: 'candles', markets: [id.toUpperCase()] }),
      ).toMatchObject({ type: 'subscribed', channel: 'candles', markets: [id] });
    const { client: sdk, errors } = connectRecorded(harness.relay.url);
    opened.push({ close: () => sdk.close() });
    const candles = sdk.subscribeCandles(market, { interval: '1m', source: 'probability' });
    expect(candles.market).toBe(id);
    await waitFor(
      'three snapshots',
      () =>
        [json, compact].every((client) => client.view('candles', id) !== undefined) &&
        candles.state !== undefined,
    );

    const history = historyResponse.parse(
      await (await fetch(`${harness.sim.url}/api/markets/${market}/history?interval=1h`)).json(),
    ).history;
    // The final candles hold only points of minutes past, which upstream serves the same every time.
    const served = new Map<string, number[]>();
    for (const point of history) {
      const start = new Date(Math.floor(Date.parse(point.time) / MINUTE) * MINUTE).toISOString();
      served.set(start, [...(served.get(start) ?? []), point.probability]);
    }
    const snapshot = json.view('candles', id)!.state as CandlesData;
    const finals = snapshot.candles.filter((candle) => candle.final) as ProbabilityCandle[];
    const compared = finals.filter((candle) => served.has(candle.start));
    expect(compared.length).toBeGreaterThan(50);
    for (const candle of compared) {
      const values = served.get(candle.start)!;
      expect(candle).toEqual({
        start: candle.start,
        open: values[0],
        high: Math.max(...values),
        low: Math.min(...values),
        close: values.at(-1),
        final: true,
      });
    }
    expect(typeof snapshot.candles.at(-1)!.open).toBe('number');
    expect((compact.view('candles', id)!.state as CandlesData).candles.slice(0, 50)).toEqual(
      snapshot.candles.slice(0, 50),
    );
    expect(candles.state!.slice(0, 50)).toEqual(snapshot.candles.slice(0, 50));
    expect([...json.violations, ...compact.violations]).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('trade candles take each print once; unsubscribed, the stream leaves the scheduler', async () => {
    const harness = await start(setup);
    const market = harness.sim.market.activeMarketIds()[0]!;
    const id = candlesStreamId({ market, interval: '1h', source: 'trades' });
    const client = await ProtocolClient.connect(harness.relay.url);
    opened.push(client);
    await client.request({ op: 'subscribe', channel: 'candles', markets: [id] });
    await waitFor('the snapshot', () => client.view('candles', id));
    const since = hourStart(Date.now());
    const state = () => client.view('candles', id)!.state as CandlesData;
    expect(harness.sim.market.printTrades(market, 150)).toBe(150);
    const prints = () => harness.sim.market.market(market)!.trades;
    await waitFor("every print in its hour's candle", () => hourlyCountsMatch(state(), prints(), since));
    const latest = candlesSince(state(), since).at(-1);
    // Read before the clock: a candle of the hour still running cannot be final yet.
    const stillOpen = latest !== undefined && Date.parse(latest.start) === hourStart(Date.now());
    expect(latest).toMatchObject({
      volume: expect.stringMatching(/^\d+(\.\d+)?$/),
      ...(stillOpen ? { final: false } : {}),
    });
    expect(client.violations).toEqual([]);

    await client.request({ op: 'unsubscribe', channel: 'candles', markets: [id] });
    // The stream lingers a little, then its target leaves the scheduler: nothing asks upstream for it.
    await waitFor('the target dropped', () => harness.relay.poller.targetCount('candles') === 0);
  });
});
