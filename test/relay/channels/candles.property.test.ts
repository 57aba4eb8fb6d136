/**
 * The candles core: however polls split and repeat the samples they serve, the candles are the
 * OHLC of every sample of each interval (open the earliest, close the latest, a tie going to the
 * one served later), volume the exact sum of sizes; final candles never change; and a client
 * applying the diffs rebuilds the relay's state exactly.
 */
import Big from 'big.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  applyCandlesUpdate,
  CANDLES_SNAPSHOT_SIZE,
} from '../../../packages/protocol/src/channels/candles/candles.ts';
import { candlesStreamId } from '../../../packages/protocol/src/channels/candles/streams.ts';
import { candlesStreamOf } from '../../../packages/protocol/src/channels/registry.ts';
import { canonicalStreamId } from '../../../packages/protocol/src/protocol/channels.ts';
import type {
  CandlesData,
  ProbabilityCandle,
  TradesCandle,
} from '../../../packages/protocol/src/protocol/messages.ts';
import { diffCandles } from '../../../src/relay/channels/candles/relay.ts';
import {
  type CandleSeries,
  candlesDataOf,
  MAX_SAMPLE_AHEAD_MS,
  mergeSamples,
} from '../../../src/relay/channels/candles/relay-series.ts';
import type { CandleSample } from '../../../src/relay/channels/relay-candle-source.ts';
import { candleSeriesSources } from '../../../src/relay/channels/relay-registry.ts';
import type { TradeSample } from '../../../src/relay/channels/trades/relay-candle-source.ts';
import { propertyRuns } from '../../support/property-runs.ts';

const INTERVAL = 60_000;
const runs = propertyRuns(300);

/** Samples within a few intervals, many sharing a time (polls asked at 0 may serve them: not too far ahead). */
const at = fc
  .integer({ min: 0, max: 4 })
  .chain((minute) => fc.constantFrom(0, 1, 30_000, 59_999).map((offset) => minute * INTERVAL + offset));
const probabilitySample = fc.record({ at, value: fc.constantFrom(0.1, 0.25, 0.5, 0.75, 0.9) });
const tradeSample: fc.Arbitrary<TradeSample> = fc.record({
  at,
  price: fc.constantFrom('0.10000000', '0.5', '0.50000000', '0.9', '0.09000000'),
  size: fc.constantFrom('1', '2.5', '0.000001', '100.25'),
});
/** Polls: each a batch of samples served, in order. */
const polls = <S>(sample: fc.Arbitrary<S>) => fc.array(fc.array(sample, { maxLength: 6 }), { maxLength: 6 });

function merged(batches: readonly (readonly CandleSample[])[], askedAt = 0): CandleSeries {
  return batches.reduce<CandleSeries>(
    (series, batch) => mergeSamples(series, batch, INTERVAL, askedAt, candleSeriesSources),
    [],
  );
}

/** Reference OHLC per interval start: a stable sort by time keeps the served order among ties. */
function reference<S extends CandleSample>(samples: readonly S[], priceOf: (sample: S) => number | string) {
  const groups = new Map<number, S[]>();
  for (const sample of samples) {
    const start = Math.floor(sample.at / INTERVAL) * INTERVAL;
    groups.set(start, [...(groups.get(start) ?? []), sample]);
  }
  return [...groups.entries()]
    .sort(([a], [b]) => a - b)
    .map(([start, group]) => {
      const ordered = [...group].sort((a, b) => a.at - b.at);
      const values = ordered.map(priceOf);
      const big = (value: number | string) => new Big(value);
      // Of equal highs (or lows) spelt differently, the one served first.
      const served = group.map(priceOf);
      return {
        start: new Date(start).toISOString(),
        open: values[0],
        close: values.at(-1),
        high: served.reduce((a, b) => (big(b).gt(big(a)) ? b : a)),
        low: served.reduce((a, b) => (big(b).lt(big(a)) ? b : a)),
        group,
      };
    });
}

describe('candles core', () => {
  it('probability candles are the OHLC of every point served, whatever the polls, repeats included', () => {
    fc.assert(
      fc.property(polls(probabilitySample), fc.boolean(), (batches, repeat) => {
        const served = repeat ? [...batches, ...batches.map((batch) => [...batch])] : batches;
        const { candles } = candlesDataOf<ProbabilityCandle>(merged(served));
        const expected = reference(batches.flat(), (sample) => sample.value);
        expect(
          candles.map(({ start, open, high, low, close }) => ({ start, open, high, low, close })),
        ).toEqual(expected.map(({ start, open, high, low, close }) => ({ start, open, high, low, close })));
      }),
      { numRuns: runs },
    );
  });

  it('trade candles keep the decimal strings and sum sizes exactly', () => {
    fc.assert(
      fc.property(polls(tradeSample), (batches) => {
        const candles = candlesDataOf(merged(batches)).candles as TradesCandle[];
        const expected = reference(batches.flat(), (sample) => sample.price);
        expect(
          candles.map(({ start, open, high, low, close }) => ({ start, open, high, low, close })),
        ).toEqual(expected.map(({ start, open, high, low, close }) => ({ start, open, high, low, close })));
        candles.forEach((candle, i) => {
          const group = expected[i]!.group;
          expect(candle.trades).toBe(group.length);
          expect(new Big(candle.volume).eq(group.reduce((sum, s) => sum.plus(s.size), new Big(0)))).toBe(
            true,
          );
        });
      }),
      { numRuns: runs },
    );
  });

  it('a candle is final once a poll asked after its end is applied, and never changes after', () => {
    fc.assert(
      fc.property(
        polls(probabilitySample),
        polls(probabilitySample),
        fc.integer({ min: 0, max: 7 }),
        (before, after, minute) => {
          const askedAt = minute * INTERVAL;
          const closed = candlesDataOf(
            mergeSamples(merged(before), [], INTERVAL, askedAt, candleSeriesSources),
          ).candles;
          for (const candle of closed)
            expect(candle.final).toBe(Date.parse(candle.start) + INTERVAL <= askedAt);
          const later = candlesDataOf(
            after.reduce<CandleSeries>(
              (series, batch) => mergeSamples(series, batch, INTERVAL, askedAt, candleSeriesSources),
              mergeSamples(merged(before), [], INTERVAL, askedAt, candleSeriesSources),
            ),
          ).candles;
          for (const candle of closed.filter((c) => c.final))
            expect(later.find((c) => c.start === candle.start)).toEqual(candle);
        },
      ),
      { numRuns: runs },
    );
  });

  it('applying each diff to the previous state gives the next one', () => {
    fc.assert(
      fc.property(
        polls(tradeSample),
        fc.array(fc.integer({ min: 0, max: 8 }), { minLength: 6, maxLength: 6 }),
        (batches, minutes) => {
          let series: CandleSeries = [];
          let client: CandlesData = { candles: [] };
          batches.forEach((batch, i) => {
            const previous = candlesDataOf<TradesCandle>(series);
            series = mergeSamples(series, batch, INTERVAL, (minutes[i] ?? 0) * INTERVAL, candleSeriesSources);
            const next = candlesDataOf<TradesCandle>(series);
            const diff = diffCandles(previous, next);
            if (diff === null) expect(next).toEqual(previous);
            else client = applyCandlesUpdate(client, diff);
            expect(client).toEqual(next);
          });
        },
      ),
      { numRuns: runs },
    );
  });

  it('a sample timed far after its poll was asked is left out, and the other samples are merged as without it', () => {
    const farAhead = fc.integer({ min: MAX_SAMPLE_AHEAD_MS + 1, max: 8.64e15 - 1 });
    fc.assert(
      fc.property(
        polls(tradeSample),
        fc.array(fc.tuple(fc.nat(6), fc.nat(6), farAhead)),
        fc.integer({ min: 0, max: 6 }),
        (batches, absurd, minute) => {
          const askedAt = minute * INTERVAL;
          const polluted = batches.map((batch) => [...batch]);
          for (const [poll, index, ahead] of absurd)
            polluted[poll % Math.max(1, polluted.length)]?.splice(index, 0, {
              at: askedAt + ahead,
              price: '99.00000000',
              size: '1',
            });
          expect(merged(polluted, askedAt)).toEqual(merged(batches, askedAt));
        },
      ),
      { numRuns: runs },
    );
  });

  it('refuses to mix a trade into a probability candle or a point into a trades candle', () => {
    const point = mergeSamples([], [{ at: 0, value: 0.5 }], INTERVAL, 0, candleSeriesSources);
    expect(() =>
      mergeSamples(point, [{ at: 1, price: '0.5', size: '1' }], INTERVAL, 0, candleSeriesSources),
    ).toThrow(TypeError);
    const trade = mergeSamples([], [{ at: 0, price: '0.5', size: '1' }], INTERVAL, 0, candleSeriesSources);
    expect(() => mergeSamples(trade, [{ at: 1, value: 0.5 }], INTERVAL, 0, candleSeriesSources)).toThrow(
      TypeError,
    );
  });

  it('keeps at most the snapshot size, dropping the oldest', () => {
    const samples = Array.from({ length: CANDLES_SNAPSHOT_SIZE + 20 }, (_, i) => ({
      at: i * INTERVAL,
      value: 0.5,
    }));
    const askedAt = samples.length * INTERVAL;
    const { candles } = candlesDataOf(mergeSamples([], samples, INTERVAL, askedAt, candleSeriesSources));
    expect(candles).toHaveLength(CANDLES_SNAPSHOT_SIZE);
    expect(candles[0]!.start).toBe(new Date(20 * INTERVAL).toISOString());
    // An older sample than every candle of a full series changes nothing.
    const again = mergeSamples(
      mergeSamples([], samples, INTERVAL, askedAt, candleSeriesSources),
      [{ at: 0, value: 0.9 }],
      INTERVAL,
      askedAt,
      candleSeriesSources,
    );
    expect(candlesDataOf(again).candles).toEqual(candles);
  });

  it('spells stream ids one way and refuses others', () => {
    const market = '3F2B8C1E-5D4A-4E6B-9C7D-1A2B3C4D5E6F';
    const id = candlesStreamId({ market, interval: '5m', source: 'trades' });
    expect(id).toBe('3f2b8c1e-5d4a-4e6b-9c7d-1a2b3c4d5e6f:5m:trades');
    expect(canonicalStreamId('candles', `${market}:5m:TRADES`)).toEqual({ ok: true, id });
    expect(candlesStreamOf(id)).toEqual({ market: market.toLowerCase(), interval: '5m', source: 'trades' });
    for (const bad of [market, `${market}:2m:trades`, `${market}:1m:volume`, `${market}:1m`, 'all'])
      expect(canonicalStreamId('candles', bad).ok).toBe(false);
  });
});
