/**
 * @module relay/channels/candles
 * The `candles` channel's core (docs/protocol.md "`candles` data"), free of I/O: a series of
 * candles built from samples (upstream's probability history points, or trade prints) as polls
 * serve them, each sample filed under the interval its own upstream time falls in. A candle's open
 * is its earliest sample and its close its latest (of two at the same time, the one served later),
 * whatever order polls serve them in, so a point served again changes nothing. A candle turns final
 * once a poll asked after its interval ended was applied; after that no sample changes it.
 *
 * The series is plain JSON (times in ms), so a cluster's lease holder can share it whole and a
 * relay taking the lease over carries on from it.
 */
import { CANDLES_SNAPSHOT_SIZE } from '../../protocol/candles.ts';
import { compareDecimals, sumDecimals } from '../../protocol/decimal.ts';
import type { Candle, CandlesData } from '../../protocol/messages.ts';

/** A probability history point (a number, as upstream serves it) at its time (ms). */
export interface ProbabilitySample {
  at: number;
  value: number;
}
/** A trade print's price and size (decimal strings) at its time (ms). */
export interface TradeSample {
  at: number;
  price: string;
  size: string;
}
export type CandleSample = ProbabilitySample | TradeSample;

/** A candle being built: its values with the times of its open and close, which merging needs. */
export interface SeriesCandle {
  start: number;
  final: boolean;
  open: number | string;
  openAt: number;
  high: number | string;
  low: number | string;
  close: number | string;
  closeAt: number;
  /** Trades only: the sum of sizes and the count. */
  volume?: string;
  trades?: number;
}

/** Oldest first; at most CANDLES_SNAPSHOT_SIZE candles. */
export type CandleSeries = readonly SeriesCandle[];

function compareValues(a: number | string, b: number | string): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return compareDecimals(String(a), String(b));
}

function sampleValue(sample: CandleSample): number | string {
  return 'value' in sample ? sample.value : sample.price;
}

/**
 * The series with `samples` merged in (in the order served), then every candle whose interval
 * ended by `askedAt` (when the request that served them was asked) final. A sample whose time is
 * not a number, that falls in a final candle, or that is older than every candle of a full series
 * is left out.
 */
export function mergeSamples(
  series: CandleSeries,
  samples: readonly CandleSample[],
  intervalMs: number,
  askedAt: number,
): SeriesCandle[] {
  const byStart = new Map<number, SeriesCandle>(series.map((candle) => [candle.start, candle]));
  const oldestKept = series.length >= CANDLES_SNAPSHOT_SIZE ? series[0]!.start : Number.NEGATIVE_INFINITY;
  for (const sample of samples) {
    if (!Number.isFinite(sample.at)) continue;
    const start = Math.floor(sample.at / intervalMs) * intervalMs;
    if (start < oldestKept) continue;
    const candle = byStart.get(start);
    if (candle?.final) continue;
    byStart.set(start, candle === undefined ? opened(start, sample) : merged(candle, sample));
  }
  const candles = [...byStart.values()].sort((a, b) => a.start - b.start).slice(-CANDLES_SNAPSHOT_SIZE);
  return candles.map((candle) =>
    candle.final || candle.start + intervalMs > askedAt ? candle : { ...candle, final: true },
  );
}

function opened(start: number, sample: CandleSample): SeriesCandle {
  const value = sampleValue(sample);
  const candle: SeriesCandle = {
    start,
    final: false,
    open: value,
    openAt: sample.at,
    high: value,
    low: value,
    close: value,
    closeAt: sample.at,
  };
  if ('size' in sample) {
    candle.volume = sample.size;
    candle.trades = 1;
  }
  return candle;
}

function merged(candle: SeriesCandle, sample: CandleSample): SeriesCandle {
  const value = sampleValue(sample);
  const next = { ...candle };
  if (sample.at < candle.openAt) {
    next.open = value;
    next.openAt = sample.at;
  }
  if (sample.at >= candle.closeAt) {
    next.close = value;
    next.closeAt = sample.at;
  }
  if (compareValues(value, candle.high) > 0) next.high = value;
  if (compareValues(value, candle.low) < 0) next.low = value;
  if ('size' in sample) {
    next.volume = sumDecimals([candle.volume ?? '0', sample.size]);
    next.trades = (candle.trades ?? 0) + 1;
  }
  return next;
}

/** The series as the channel's state: each candle's wire form, oldest first. */
export function candlesDataOf(series: CandleSeries): CandlesData {
  return { candles: series.map(wireCandle) };
}

function wireCandle(candle: SeriesCandle): Candle {
  const start = new Date(candle.start).toISOString();
  const { open, high, low, close, final } = candle;
  if (candle.volume === undefined)
    return { start, open: Number(open), high: Number(high), low: Number(low), close: Number(close), final };
  return {
    start,
    open: String(open),
    high: String(high),
    low: String(low),
    close: String(close),
    volume: candle.volume,
    trades: candle.trades ?? 0,
    final,
  };
}

/** The candles of `next` new or changed since `prev` (compared by `start`), oldest first. */
export function diffCandles(prev: CandlesData, next: CandlesData): CandlesData | null {
  const before = new Map(prev.candles.map((candle) => [candle.start, candle]));
  const candles = next.candles.filter((candle) => {
    const old = before.get(candle.start);
    return old === undefined || !sameCandle(old, candle);
  });
  return candles.length === 0 ? null : { candles };
}

function sameCandle(a: Candle, b: Candle): boolean {
  return (
    a.open === b.open &&
    a.high === b.high &&
    a.low === b.low &&
    a.close === b.close &&
    a.final === b.final &&
    ('volume' in a ? a.volume : undefined) === ('volume' in b ? b.volume : undefined) &&
    ('trades' in a ? a.trades : undefined) === ('trades' in b ? b.trades : undefined)
  );
}
