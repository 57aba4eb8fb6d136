/**
 * The `candles` target against the simulator, both on one manual clock, polled by hand: the
 * backfilled snapshot is the history (or the trades) upstream serves, bucketed; after a minute
 * boundary the previous candle is final and is the OHLC of every point served in that minute.
 */
import Big from 'big.js';
import { afterEach, describe, expect, it } from 'vitest';
import { CANDLES_SNAPSHOT_SIZE } from '../../../packages/protocol/src/channels/candles/candles.ts';
import {
  type CandleInterval,
  candlesStreamId,
} from '../../../packages/protocol/src/channels/candles/streams.ts';
import type {
  CandlesData,
  ProbabilityCandle,
  TradeEntry,
  TradesCandle,
} from '../../../packages/protocol/src/protocol/messages.ts';
import { LocalBroker } from '../../../src/relay/coordination/local/broker.ts';
import type { SharedResult } from '../../../src/relay/coordination/shared-result.ts';
import { RelayEvents } from '../../../src/relay/events.ts';
import { trustingJudge } from '../../../src/relay/poll/not-found.ts';
import type { PollContext, PollSource } from '../../../src/relay/poll/poll-target.ts';
import { StreamPublisher } from '../../../src/relay/streams/publisher.ts';
import { StreamRegistry } from '../../../src/relay/streams/registry.ts';
import type { AnyStream, StreamSubscriber } from '../../../src/relay/streams/stream.ts';
import { type SimulatorHandle, startSimulator } from '../../../src/sim/server.ts';
import type { HistoryPoint, MarketActivityResponse } from '../../../src/upstream/schemas.ts';
import { CandlesTarget } from '../../support/channels/candles-target.ts';

const MINUTE = 60_000;
/** A minute boundary plus 10 s, so that a poll a few seconds on stays inside the minute. */
const T0 = Date.parse('2026-03-02T12:00:10.000Z');

/** A broker whose follower this test plays the lease holder to. */
class HeardShare extends LocalBroker {
  heard: ((result: SharedResult) => void) | undefined;
  override follow(_target: string, onResult: (result: SharedResult) => void): void {
    this.heard = onResult;
  }
}

const nobody: StreamSubscriber = { deliver() {}, notify() {}, ended() {} };

/** What upstream served, as the relay's polls asked for it over HTTP. */
class SimSource {
  readonly historyServed: HistoryPoint[][] = [];
  readonly #sim: SimulatorHandle;

  constructor(sim: SimulatorHandle) {
    this.#sim = sim;
  }

  async publicBody(request: { pathname: string; query: Record<string, string> }): Promise<unknown> {
    const query = new URLSearchParams(request.query).toString();
    const body = (await (await fetch(`${this.#sim.url}${request.pathname}?${query}`)).json()) as {
      history: HistoryPoint[];
    };
    this.historyServed.push(body.history);
    return body;
  }

  async marketActivity(market: string, page: { limit: number; offset: number }) {
    const url = `${this.#sim.url}/api/markets/${market}/activity?limit=${page.limit}&offset=${page.offset}`;
    return (await (await fetch(url)).json()) as MarketActivityResponse;
  }
}

/** The OHLC of values in time order (ties in the order served), as a reader of the docs computes it. */
function ohlc<V>(points: readonly { at: number; value: V }[], compare: (a: V, b: V) => number) {
  const ordered = [...points].sort((a, b) => a.at - b.at);
  const values = ordered.map((point) => point.value);
  return {
    open: values[0]!,
    high: values.reduce((a, b) => (compare(b, a) > 0 ? b : a)),
    low: values.reduce((a, b) => (compare(b, a) < 0 ? b : a)),
    close: values.at(-1)!,
  };
}

const byStart = (points: readonly { at: number; value: number }[]) => {
  const groups = new Map<number, { at: number; value: number }[]>();
  for (const point of points) {
    const start = Math.floor(point.at / MINUTE) * MINUTE;
    groups.set(start, [...(groups.get(start) ?? []), point]);
  }
  return groups;
};

const historySamples = (history: readonly HistoryPoint[]) =>
  history.map((point) => ({ at: Date.parse(point.time), value: point.probability }));

describe('CandlesTarget', () => {
  let sim: SimulatorHandle | undefined;
  afterEach(async () => {
    await sim?.close();
    sim = undefined;
  });

  async function setup(
    streamSource: 'probability' | 'trades',
    wrap = (source: SimSource): object => source,
    cluster: LocalBroker = new LocalBroker(),
    interval: CandleInterval = '1m',
  ) {
    let clock = T0;
    sim = await startSimulator({
      markets: 2,
      seed: 11,
      tickMs: 0,
      now: () => clock,
      tradeFlow: () => undefined,
    });
    const market = sim.market.activeMarketIds()[0]!;
    const source = new SimSource(sim);
    const registry = new StreamRegistry({ lingerMs: 10, resumeBufferSize: 10 });
    const events = new RelayEvents();
    const now = () => clock;
    const context: PollContext = {
      source: wrap(source) as PollSource,
      cluster,
      publisher: new StreamPublisher(events, now),
      registry,
      events,
      now,
      existence: trustingJudge,
      report() {},
    };
    const id = candlesStreamId({ market, interval, source: streamSource });
    const stream = registry.subscribe(nobody, { channel: 'candles', market: id });
    const target = new CandlesTarget(id, { minIntervalMs: 1000, maxAgeMs: 30_000 }, context);
    const simulator = sim;
    return {
      market,
      source,
      simulator,
      target,
      /** Moves both clocks to `at`, lets the market move, and polls once. */
      async pollAt(at: number) {
        clock = at;
        simulator.tick();
        target.lastAskedAt = at;
        await target.poll();
        return (stream as AnyStream).state as CandlesData;
      },
      state: () => (stream as AnyStream).state as CandlesData,
    };
  }

  it('backfills probability candles from the history served, then closes each minute with what was served in it', async () => {
    const { source, pollAt } = await setup('probability');
    const snapshot = await pollAt(T0);
    const [backfill] = source.historyServed;
    const expected = [...byStart(historySamples(backfill!))].map(([start, points]) => ({
      start: new Date(start).toISOString(),
      ...ohlc(points, (a, b) => a - b),
      final: start + MINUTE <= T0,
    }));
    expect(snapshot.candles).toEqual(expected);
    expect(snapshot.candles.length).toBeGreaterThan(50);
    expect(snapshot.candles.at(-1)!.final).toBe(false);

    // Points served inside the minute, then the first poll after its end.
    for (const offset of [15_000, 31_000, 47_000]) await pollAt(T0 + offset);
    const after = await pollAt(T0 + MINUTE - 10_000 + 2_000);
    const minuteStart = T0 - 10_000;
    const served = source.historyServed
      .flatMap(historySamples)
      .filter((point) => point.at >= minuteStart && point.at < minuteStart + MINUTE);
    const closed = after.candles.find((candle) => candle.start === new Date(minuteStart).toISOString());
    expect(closed).toEqual({
      start: new Date(minuteStart).toISOString(),
      ...ohlc(served, (a, b) => a - b),
      final: true,
    } satisfies ProbabilityCandle);
    expect(served.length).toBeGreaterThanOrEqual(4);
    expect(after.candles.at(-1)!.final).toBe(false);
  });

  it('a history body of the wrong shape is a failed poll: nothing is published, the next poll backfills', async () => {
    let broken = true;
    const { source, target, pollAt } = await setup('probability', (sim) => ({
      publicBody: async (request: Parameters<SimSource['publicBody']>[0]) =>
        broken
          ? { success: true, history: [{ time: 'yesterday', probability: '0.5' }] }
          : sim.publicBody(request),
    }));
    expect(await pollAt(T0)).toBeUndefined();
    expect(target.lastError).toBeDefined();
    broken = false;
    const snapshot = await pollAt(T0 + 1_000);
    expect(snapshot.candles.length).toBeGreaterThan(50);
    expect(source.historyServed).toHaveLength(1);
  });

  it("takes a lease holder's series only when it is of the stream's source, within the snapshot size, oldest first", async () => {
    const cluster = new HeardShare();
    const { pollAt, state } = await setup('probability', undefined, cluster);
    const before = await pollAt(T0);
    const minute = T0 - 10_000;
    const times = { final: false, openAt: minute, closeAt: minute };
    const trades = { ...times, open: '0.5', high: '0.5', low: '0.5', close: '0.5', volume: '1', trades: 1 };
    const point = { ...times, open: 0.25, high: 0.25, low: 0.25, close: 0.25 };
    const share = (series: object[], receivedAt: number) =>
      cluster.heard?.({ kind: 'response', receivedAt, body: { series, seen: [] } });
    const refused = [
      [{ start: minute, ...trades }],
      [{ start: minute, ...point, open: '0.25' }],
      [{ start: minute, ...point, close: Number.NaN }],
      [
        { start: minute, ...point },
        { start: minute - MINUTE, ...point },
      ],
      Array.from({ length: CANDLES_SNAPSHOT_SIZE + 1 }, (_, i) => ({ start: i * MINUTE, ...point })),
    ];
    refused.forEach((series, i) => {
      share(series, T0 + 1_000 + i);
    });
    expect(state()).toEqual(before);
    share([{ start: minute, ...point }], T0 + 2_000);
    expect(state().candles).toEqual([
      { start: new Date(minute).toISOString(), open: 0.25, high: 0.25, low: 0.25, close: 0.25, final: false },
    ]);
  });

  it('a later history body with a non-finite or string probability fails that poll and leaves the candles as they were', async () => {
    let broken: unknown;
    const { target, pollAt, state } = await setup('probability', (sim) => ({
      publicBody: async (request: Parameters<SimSource['publicBody']>[0]) =>
        broken ?? sim.publicBody(request),
    }));
    const before = await pollAt(T0);
    const point = {
      time: new Date(T0).toISOString(),
      midpoint_price: 0.5,
      best_bid: 0.49,
      best_ask: 0.51,
      spread: 0.02,
    };
    for (const probability of [Number.POSITIVE_INFINITY, Number.NaN, '0.5', null]) {
      broken = {
        success: true,
        market_id: '3f2b8c1e-5d4a-4e6b-9c7d-1a2b3c4d5e6f',
        history: [{ ...point, probability }],
      };
      target.lastError = undefined;
      await pollAt(T0 + 1_000);
      expect(target.lastError).toBeDefined();
      expect(state()).toEqual(before);
    }
    broken = undefined;
    expect((await pollAt(T0 + 2_000)).candles.length).toBeGreaterThanOrEqual(before.candles.length);
  });

  it('reads the backfill range again after a gap longer than the live range covers', async () => {
    const ranges: string[] = [];
    const { pollAt } = await setup(
      'probability',
      (sim) => ({
        publicBody: (request: Parameters<SimSource['publicBody']>[0]) => {
          ranges.push(request.query.interval ?? '');
          return sim.publicBody(request);
        },
      }),
      undefined,
      '5m',
    );
    await pollAt(T0);
    await pollAt(T0 + 1_000);
    await pollAt(T0 + 2 * 3_600_000);
    await pollAt(T0 + 2 * 3_600_000 + 1_000);
    expect(ranges).toEqual(['24h', '1h', '24h', '1h']);
  });

  it('builds trade candles from the prints, volume as the exact sum of sizes, final after the minute', async () => {
    const { market, simulator, pollAt } = await setup('trades');
    simulator.market.printTrades(market, 3);
    await pollAt(T0);
    const minuteStart = T0 - 10_000;
    for (const offset of [20_000, 40_000]) {
      simulator.market.printTrades(market, 4);
      await pollAt(T0 + offset);
    }
    simulator.market.printTrades(market, 2);
    const after = await pollAt(minuteStart + MINUTE + 1_000);
    const activity = (await (
      await fetch(`${simulator.url}/api/markets/${market}/activity?limit=100&offset=0`)
    ).json()) as { activity: TradeEntry[] };
    // Oldest first, as the simulator printed them (one poll's prints share their time).
    const byId = new Map(activity.activity.map((entry) => [entry.activity_id, entry]));
    const inMinute = simulator.market
      .market(market)!
      .trades.map((trade) => byId.get(trade.id)!)
      .filter((entry) => {
        const at = Date.parse(entry.activity_timestamp);
        return at >= minuteStart && at < minuteStart + MINUTE;
      });
    // The books' own fills on each tick print a few more beside the test's 11.
    expect(inMinute.length).toBeGreaterThanOrEqual(11);
    const prices = inMinute.map((entry) => ({
      at: Date.parse(entry.activity_timestamp),
      value: entry.price,
    }));
    const candle = after.candles.find((c) => c.start === new Date(minuteStart).toISOString()) as TradesCandle;
    expect(candle).toMatchObject({
      ...ohlc(prices, (a, b) => new Big(a).cmp(b)),
      trades: inMinute.length,
      final: true,
    });
    const volume = inMinute.reduce((sum, entry) => sum.plus(entry.size), new Big(0));
    expect(new Big(candle.volume).eq(volume)).toBe(true);
    expect(after.candles.at(-1)!.final).toBe(false);
  });

  it('leaves the interval a trades backfill cut at its page bound could not read whole out for good', async () => {
    const { market, simulator, pollAt } = await setup('trades');
    const minuteStart = new Date(T0 - 10_000).toISOString();
    // More prints in this minute than a backfill's five pages hold, all at one time (order unknown).
    simulator.market.printTrades(market, 700);
    expect((await pollAt(T0)).candles.find((candle) => candle.start === minuteStart)).toBeUndefined();
    // Later prints in that minute would make a candle of only some of its trades.
    simulator.market.printTrades(market, 3);
    expect((await pollAt(T0 + 5_000)).candles.find((candle) => candle.start === minuteStart)).toBeUndefined();
    await pollAt(T0 + 55_000);
    simulator.market.printTrades(market, 2);
    const next = await pollAt(T0 + 56_000);
    expect(next.candles.find((candle) => candle.start === minuteStart)).toBeUndefined();
    expect(next.candles.at(-1)).toMatchObject({ start: new Date(T0 + 50_000).toISOString(), final: false });
    expect((next.candles.at(-1) as TradesCandle).trades).toBeGreaterThanOrEqual(2);
  });
});
