/**
 * @module channels/candles/sources
 * What a `candles` stream's candles are of (docs/protocol.md "`candles` data"): each source, by
 * its name in the stream id, and the candle it makes. On the server, ./relay-keeper.ts reads the
 * probability history and ./relay-trade-prints.ts the trade prints; ./relay-series.ts builds
 * either's candles from their samples.
 */
import { isObject } from '../../util/field-checks.ts';

/**
 * Each source: `probability`, upstream's probability history (numbers, as upstream serves them);
 * `trades`, the market's trade prints (decimal strings, with volume).
 */
export const candleSources = ['probability', 'trades'] as const;
export type CandleSource = (typeof candleSources)[number];

/**
 * One interval of a market's probability or trade prices. `start` is the interval's start (ISO
 * 8601 UTC with ms); `final` once the interval has ended and the relay has read upstream since,
 * after which the candle never changes.
 */
interface CandleFields {
  start: string;
  final: boolean;
}
/** Of upstream's probability history: JSON numbers, as upstream serves them. */
export interface ProbabilityCandle extends CandleFields {
  open: number;
  high: number;
  low: number;
  close: number;
}
/** Of trade prints: prices and volume (the sum of sizes) as exact decimal strings, and the trade count. */
export interface TradesCandle extends CandleFields {
  open: string;
  high: string;
  low: string;
  close: string;
  volume: string;
  trades: number;
}
export type Candle = ProbabilityCandle | TradesCandle;

/** A probability candle (numbers) or a trades candle (decimal strings, volume and count). */
export function isCandle(value: unknown): boolean {
  if (!isObject(value) || typeof value.start !== 'string' || typeof value.final !== 'boolean') return false;
  const prices = [value.open, value.high, value.low, value.close];
  if (prices.every((price) => typeof price === 'number')) return true;
  return (
    prices.every((price) => typeof price === 'string') &&
    typeof value.volume === 'string' &&
    Number.isSafeInteger(value.trades)
  );
}
