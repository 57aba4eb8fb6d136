/**
 * @module channels/trades/candle-source
 * The `trades` channel's prints as a source of candle streams (../candle-source.ts): the candle
 * they make and its check. ../registry.ts adds it to the candle channel's sources; on the server,
 * relay/channels/trades/relay-candle-source.ts reads the prints and sums them.
 */
import type { CandleFields, CandleSourceOf } from '../candle-source.ts';
import { checkSince } from './since.ts';

/** Of trade prints: prices and volume (the sum of sizes) as exact decimal strings, and the trade count. */
export interface TradesCandle extends CandleFields {
  open: string;
  high: string;
  low: string;
  close: string;
  volume: string;
  trades: number;
}

/** `trades`: the market's trade prints (decimal strings, with volume). */
export const tradesCandles: CandleSourceOf<'trades'> = {
  name: 'trades',
  isCandle: (candle) =>
    [candle.open, candle.high, candle.low, candle.close].every((price) => typeof price === 'string') &&
    typeof candle.volume === 'string' &&
    Number.isSafeInteger(candle.trades),
  // The prints since then, read as the channel reads its own history.
  since: checkSince,
};
