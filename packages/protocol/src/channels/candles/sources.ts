/**
 * @module channels/candles/sources
 * What a `candles` stream's candles are of (docs/protocol.md "`candles` data"): each source, by
 * its name in the stream id, and the candle it makes (../candle-source.ts). The channel is generic
 * over its sources: this folder offers `probability` (upstream's probability history); a channel
 * with samples of its own offers its source from its folder, and ../registry.ts composes the
 * list. On the server, each source reads its samples (relay/channels/candles/relay-history.ts here) and
 * relay/channels/candles/relay-series.ts builds candles from them.
 */
import { isObject } from '../../util/field-checks.ts';
import type { CandleFields, CandleSourceOf } from '../candle-source.ts';

/** Of upstream's probability history: JSON numbers, as upstream serves them. */
export interface ProbabilityCandle extends CandleFields {
  open: number;
  high: number;
  low: number;
  close: number;
}

/** `probability`: upstream's probability history (numbers, as upstream serves them). */
export const probabilityCandles: CandleSourceOf<'probability'> = {
  name: 'probability',
  isCandle: (candle) =>
    [candle.open, candle.high, candle.low, candle.close].every((price) => typeof price === 'number'),
};

/** A candle of one of `sources`. */
export function isCandleOf(sources: readonly CandleSourceOf[], value: unknown): boolean {
  if (!isObject(value) || typeof value.start !== 'string' || typeof value.final !== 'boolean') return false;
  return sources.some((source) => source.isCandle(value));
}
