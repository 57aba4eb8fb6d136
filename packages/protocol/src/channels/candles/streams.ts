/**
 * @module channels/candles/streams
 * What a `candles` stream is (docs/protocol.md "`candles` data"): one market's candles of one
 * interval from one source (./sources.ts), its id spelled `<market>:<interval>:<source>`.
 */

/** Each candle interval and its length (ms). Candles start at multiples of it since the Unix epoch (UTC). */
export const candleIntervalMs = { '1m': 60_000, '5m': 300_000, '1h': 3_600_000, '1d': 86_400_000 } as const;
export type CandleInterval = keyof typeof candleIntervalMs;
export const candleIntervals = Object.keys(candleIntervalMs) as CandleInterval[];

export interface CandlesStream<N extends string = string> {
  market: string;
  interval: CandleInterval;
  source: N;
}

/**
 * How the ids of streams from `sources` (their names) are read: the market, interval and source of
 * an id (any case), or undefined for one that is not.
 */
export function candlesStreamReader<N extends string>(
  sources: readonly N[],
): (id: string) => CandlesStream<N> | undefined {
  const pattern = new RegExp(
    `^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}):(${candleIntervals.join('|')}):(${sources.join('|')})$`,
  );
  return (id) => {
    const match = pattern.exec(id.toLowerCase());
    if (match === null) return undefined;
    return { market: match[1]!, interval: match[2] as CandleInterval, source: match[3] as N };
  };
}

/** A candles stream's id in its one spelling (lower case). */
export function candlesStreamId({ market, interval, source }: CandlesStream): string {
  return `${market.toLowerCase()}:${interval}:${source}`;
}
