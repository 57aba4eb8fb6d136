/**
 * @module relay/channels/candles/relay-series
 * The `candles` channel's series (docs/protocol.md "`candles` data"), free of I/O: a series of
 * candles built from samples (each source's, ../relay-candle-source.ts) as polls
 * serve them, each sample filed under the interval its own upstream time falls in. A candle's open
 * is its earliest sample and its close its latest (of two at the same time, the one served later),
 * whatever order polls serve them in, so a point served again changes nothing. A candle turns final
 * once a poll asked after its interval ended was applied; after that no sample changes it.
 *
 * The series is plain JSON (times in ms), so a cluster's lease holder can share it whole and a
 * relay taking the lease over carries on from it.
 */
import type { CandleFields } from '../../../../packages/protocol/src/channels/candle-source.ts';
import {
  CANDLES_SNAPSHOT_SIZE,
  type CandlesData,
} from '../../../../packages/protocol/src/channels/candles/candles.ts';
import type { Fields } from '../../../../packages/protocol/src/util/field-checks.ts';
import type { CandleSample, SeriesSource } from '../relay-candle-source.ts';

/** When a candle's open and close were served, which merging needs. */
interface CandleTimes {
  start: number;
  final: boolean;
  openAt: number;
  closeAt: number;
}
/** A candle's prices, in its source's type. */
interface Prices<V> {
  open: V;
  high: V;
  low: V;
  close: V;
}
/**
 * A candle being built, of any source: upstream's values, never turned into anything else (a
 * probability's numbers, a print's decimal strings), its source's totals, and its times.
 */
export type SeriesCandle = CandleTimes & Prices<unknown> & Fields;

/** Oldest first; at most CANDLES_SNAPSHOT_SIZE candles. */
export type CandleSeries = readonly SeriesCandle[];

/**
 * How far after the poll was asked a sample may be timed. Upstream's clock may run a little ahead
 * of the relay's, but a time far ahead would open a candle no poll could close for as long, that
 * stays the newest and pushes real ones out of a full series.
 */
export const MAX_SAMPLE_AHEAD_MS = 5 * 60_000;

/**
 * The series with `samples` merged in (in the order served), then every candle whose interval
 * ended by `askedAt` (when the request that served them was asked) final. A sample whose time is
 * not a number or lies more than MAX_SAMPLE_AHEAD_MS after `askedAt`, that falls in a final candle,
 * or that is older than every candle of a full series (of `keep` candles, a stream's by default)
 * is left out.
 */
export function mergeSamples<S extends CandleSample>(
  series: CandleSeries,
  samples: readonly S[],
  intervalMs: number,
  askedAt: number,
  sources: readonly SeriesSource[],
  keep = CANDLES_SNAPSHOT_SIZE,
): SeriesCandle[] {
  const byStart = new Map<number, SeriesCandle>(series.map((candle) => [candle.start, candle]));
  const oldestKept = series.length >= keep ? series[0]!.start : Number.NEGATIVE_INFINITY;
  for (const sample of samples) {
    if (!Number.isFinite(sample.at) || sample.at > askedAt + MAX_SAMPLE_AHEAD_MS) continue;
    const start = Math.floor(sample.at / intervalMs) * intervalMs;
    if (start < oldestKept) continue;
    const candle = byStart.get(start);
    if (candle?.final) continue;
    byStart.set(
      start,
      candle === undefined ? opened(start, sample, sources) : merged(candle, sample, sources),
    );
  }
  const candles = [...byStart.values()].sort((a, b) => a.start - b.start).slice(-keep);
  return candles.map((candle) =>
    candle.final || candle.start + intervalMs > askedAt ? candle : { ...candle, final: true },
  );
}

function sourceOf(sample: CandleSample, sources: readonly SeriesSource[]): SeriesSource {
  const source = sources.find((each) => each.takes(sample));
  if (source === undefined) throw new TypeError('a sample of no source');
  return source;
}

function opened(start: number, sample: CandleSample, sources: readonly SeriesSource[]): SeriesCandle {
  const source = sourceOf(sample, sources);
  const value = source.value(sample);
  const times = { start, final: false, openAt: sample.at, closeAt: sample.at };
  return { ...times, open: value, high: value, low: value, close: value, ...source.first(sample) };
}

function merged(candle: SeriesCandle, sample: CandleSample, sources: readonly SeriesSource[]): SeriesCandle {
  const source = sourceOf(sample, sources);
  // A stream's samples all come from one source; a mix is a bug, not something to round away.
  if (!source.holds(candle)) throw new TypeError("a sample merged into another source's candle");
  return {
    ...withValue(candle, source.value(sample), sample.at, (a, b) => source.compare(a, b)),
    ...source.added(candle, sample),
  };
}

/** The candle with one more value at `at`, compared in the value's own type. */
function withValue<V, C extends CandleTimes & { open: V; high: V; low: V; close: V }>(
  candle: C,
  value: V,
  at: number,
  compare: (a: V, b: V) => number,
): C {
  const next = { ...candle };
  if (at < candle.openAt) {
    next.open = value;
    next.openAt = at;
  }
  // Of two at the same time, the one served later is the later: a point served again changes nothing.
  if (at >= candle.closeAt) {
    next.close = value;
    next.closeAt = at;
  }
  if (compare(value, candle.high) > 0) next.high = value;
  if (compare(value, candle.low) < 0) next.low = value;
  return next;
}

/** The series as the channel's state: each candle's wire form, oldest first. */
export function candlesDataOf<C extends CandleFields>(series: CandleSeries): CandlesData<C> {
  return { candles: series.map((candle) => wireCandle<C>(candle)) };
}

/** A candle's values as it holds them (open, high, low, close, then its source's totals), between its start and `final`. */
function wireCandle<C extends CandleFields>(candle: SeriesCandle): C {
  const { start, final, openAt: _openAt, closeAt: _closeAt, ...values } = candle;
  // Its source made the values (channels/registry.ts's candle type is the union of the sources' candles).
  return { start: new Date(start).toISOString(), ...values, final } as unknown as C;
}
