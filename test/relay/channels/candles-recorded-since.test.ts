/**
 * `candles` of source `trades` with `since`, on a relay that records: the prints come from the
 * record of the market's trades where it reaches back to the range's start (no upstream request,
 * each `activity_id` once however many recorded messages repeat it), and from upstream's activity
 * pages where it does not; of source `probability`, the market's midpoints from the record of the
 * `probabilities` map, filed by their own times.
 */
import { describe, expect, it } from 'vitest';
import type { TradeEntry } from '../../../packages/protocol/src/channels/trades/trades.ts';
import { type HistoryUpstream, historyCandles } from '../../../src/relay/channels/candles/relay-history.ts';
import { candlesHistory } from '../../../src/relay/channels/candles/relay-since.ts';
import type { RecordedHistory } from '../../../src/relay/channels/relay-definition.ts';
import type { ActivityUpstream } from '../../../src/relay/channels/trades/relay-activity-pages.ts';
import { tradesCandleSource } from '../../../src/relay/channels/trades/relay-candle-source.ts';

const market = '3f2b8c1e-5d4a-4e6b-9c7d-1a2b3c4d5e6f';
const minute = Date.UTC(2026, 0, 1, 12, 0);
const trade = (id: string, second: number, price: string): TradeEntry => ({
  activity_id: id,
  activity_type: 'TRADE',
  price,
  size: '2',
  total_value: '1',
  activity_timestamp: new Date(minute + second * 1000).toISOString(),
});
const since = { kind: 'time', at: minute + 20_000, text: new Date(minute + 20_000).toISOString() } as const;
const now = minute + 150_000;
const history = candlesHistory([tradesCandleSource]);
const noUpstream = {} as ActivityUpstream;

describe('candles since from the recorded trades', () => {
  it('files the recorded prints of the range into its final candles, asking upstream nothing', async () => {
    const asked: string[] = [];
    const recordedSince: RecordedHistory['since'] = async (channel, streamId, from) => {
      asked.push(`${channel} ${streamId} ${from}`);
      // A snapshot repeats trades an update brought before: each counts once.
      return [
        { trades: [trade('a', 5, '0.40'), trade('b', 30, '0.50')] },
        { trades: [trade('c', 70, '0.45')] },
        { trades: [trade('b', 30, '0.50'), trade('c', 70, '0.45'), trade('d', 95, '0.55')] },
      ];
    };
    let requests = 0;
    const read = await history.read(
      noUpstream,
      `${market}:1m:trades`,
      since,
      now,
      () => {
        requests += 1;
        throw new Error('upstream was asked');
      },
      { since: recordedSince, lastRun: async () => undefined },
    );
    // The range starts at the minute `since` falls in, so its first candle is whole.
    expect(asked).toEqual([`trades ${market} ${minute}`]);
    expect(requests).toBe(0);
    expect(read).toMatchObject({ ok: true, pages: 0 });
    const candles = read.ok ? read.candles : [];
    expect(candles).toMatchObject([
      { start: new Date(minute).toISOString(), open: '0.40', close: '0.50', volume: '4', trades: 2 },
      { start: new Date(minute + 60_000).toISOString(), open: '0.45', close: '0.55', volume: '4', trades: 2 },
    ]);
    expect(candles).toHaveLength(2);
  });

  it('reads upstream where the record does not reach back to the range start', async () => {
    let requests = 0;
    const read = history.read(
      noUpstream,
      `${market}:1m:trades`,
      since,
      now,
      () => {
        requests += 1;
        return Promise.reject(new Error('upstream unavailable'));
      },
      { since: async () => undefined, lastRun: async () => undefined },
    );
    await expect(read).rejects.toThrow('upstream unavailable');
    expect(requests).toBe(1);
  });
});

describe('probability candles since from the recorded probabilities', () => {
  const probability = candlesHistory([historyCandles]);
  const entry = (midpoint: number, second: number) => ({
    midpoint,
    best_bid: midpoint - 0.005,
    best_ask: midpoint + 0.005,
    last_trade_price: midpoint,
    timestamp: new Date(minute + second * 1000).toISOString(),
  });
  const other = '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';

  it("files the market's recorded midpoints by their own times, numbers as upstream sent them, asking upstream nothing", async () => {
    const asked: string[] = [];
    const recorded: RecordedHistory = {
      async since(channel, streamId, from) {
        asked.push(`${channel} ${streamId} ${from}`);
        return [
          // The snapshot's entry is older than the range: left out.
          { [market]: entry(0.4, -30), [other]: entry(0.9, 0) },
          { [market]: entry(0.52, 10) },
          // An entry sent again unchanged, another market's, a market that left the map.
          { [market]: entry(0.52, 10), [other]: entry(0.1, 20) },
          { [market]: entry(0.5, 40) },
          { [market]: null },
          { [market]: entry(0.515, 65) },
          { [market]: entry(0.53, 100) },
        ];
      },
      lastRun: async () => undefined,
    };
    const read = await probability.read(
      {} as HistoryUpstream,
      `${market}:1m:probability`,
      since,
      now,
      () => {
        throw new Error('upstream was asked');
      },
      recorded,
    );
    expect(asked).toEqual([`probabilities all ${minute}`]);
    expect(read).toMatchObject({ ok: true, pages: 0 });
    expect(read.ok && read.candles).toEqual([
      { start: new Date(minute).toISOString(), open: 0.52, high: 0.52, low: 0.5, close: 0.5, final: true },
      {
        start: new Date(minute + 60_000).toISOString(),
        open: 0.515,
        high: 0.53,
        low: 0.515,
        close: 0.53,
        final: true,
      },
    ]);
    // Which record it reads, and from when: the start of the interval the time falls in.
    expect(probability.recordOnly?.(`${market}:1m:probability`, since)).toEqual({
      channel: 'probabilities',
      streamId: 'all',
      from: minute,
    });
    expect(history.recordOnly?.(`${market}:1m:trades`, since)).toBeUndefined();
  });
});
