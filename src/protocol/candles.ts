/**
 * @module protocol/candles
 * The `candles` channel's stream ids and state (docs/protocol.md "`candles` data"): a stream is one
 * market's candles of one interval from one source, spelled `<market>:<interval>:<source>`; a client
 * keeps the most recent {@link CANDLES_SNAPSHOT_SIZE}, replacing each one an update carries by its
 * `start`, and checks each message's checksum. Pure and shared by the relay and the SDK.
 */
import type { Crc32 } from './book.ts';
import { restChecksum } from './json-patch.ts';
import type { Candle, CandlesData, JsonValue } from './messages.ts';

/** Each candle interval and its length (ms). Candles start at multiples of it since the Unix epoch (UTC). */
export const candleIntervalMs = { '1m': 60_000, '5m': 300_000, '1h': 3_600_000, '1d': 86_400_000 } as const;
export type CandleInterval = keyof typeof candleIntervalMs;
export const candleIntervals = Object.keys(candleIntervalMs) as CandleInterval[];

/**
 * What a stream's candles are of: `probability`, upstream's probability history (numbers, as
 * upstream serves them); `trades`, the market's trade prints (decimal strings, with volume).
 */
export const candleSources = ['probability', 'trades'] as const;
export type CandleSource = (typeof candleSources)[number];

/** A snapshot carries at most this many of the most recent candles (and a client keeps as many). */
export const CANDLES_SNAPSHOT_SIZE = 200;

export interface CandlesStream {
  market: string;
  interval: CandleInterval;
  source: CandleSource;
}

const CANDLES_STREAM =
  /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}):(1m|5m|1h|1d):(probability|trades)$/;

/** The market, interval and source of a candles stream id (any case), or undefined for one that is not. */
export function candlesStreamOf(id: string): CandlesStream | undefined {
  const match = CANDLES_STREAM.exec(id.toLowerCase());
  if (match === null) return undefined;
  return { market: match[1]!, interval: match[2] as CandleInterval, source: match[3] as CandleSource };
}

/** A candles stream's id in its one spelling (lower case). */
export function candlesStreamId({ market, interval, source }: CandlesStream): string {
  return `${market.toLowerCase()}:${interval}:${source}`;
}

/**
 * A candles update applied: each candle it carries replaces the one of the same `start` or joins
 * the list in time order, and only the most recent {@link CANDLES_SNAPSHOT_SIZE} are kept.
 */
export function applyCandlesUpdate(state: CandlesData, update: CandlesData): CandlesData {
  const byStart = new Map<string, Candle>(state.candles.map((candle) => [candle.start, candle]));
  for (const candle of update.candles) byStart.set(candle.start, candle);
  const candles = [...byStart.values()].sort((a, b) => Date.parse(a.start) - Date.parse(b.start));
  return { candles: candles.slice(-CANDLES_SNAPSHOT_SIZE) };
}

/** A candles message's checksum: as `rest`'s, of the state `{ candles }` as canonical JSON. */
export function candlesChecksum(state: CandlesData, crc32?: Crc32): number {
  // Candles are JSON (strings, numbers, booleans) without an index signature.
  return restChecksum({ candles: state.candles as unknown as JsonValue[] }, crc32);
}
