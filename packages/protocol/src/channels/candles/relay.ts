/**
 * @module channels/candles/relay
 * The `candles` channel's server part: its diff and checksum, what each stream keeps and reads per
 * poll (./relay-keeper.ts), which relay/targets/kept-target.ts polls, and the bound on the streams
 * one connection and one client address may hold.
 */
import { crc32 } from 'node:zlib';
import type { RelayChannel } from '../relay-definition.ts';
import type { TradesEventMap } from '../trades/relay-poll.ts';
import { type Candle, type CandlesData, candlesChecksum } from './candles.ts';
import { CandlesKeeper, type CandlesUpstream } from './relay-keeper.ts';

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

/** Distinct `candles` streams, per connection and per address group (`--max-candle-streams`). */
export interface CandlesGroupLimits {
  maxCandleStreams: number;
  maxCandleStreamsPerAddress: number;
}

export const candlesRelay: RelayChannel<
  CandlesUpstream,
  CandlesData,
  CandlesData,
  TradesEventMap,
  CandlesGroupLimits
> = {
  // Node's native CRC-32 on every message.
  codec: { diff: diffCandles, checksum: (state) => candlesChecksum(state, crc32) },
  kept: (streamId) => new CandlesKeeper(streamId),
  groupBound: {
    noun: 'candles streams',
    doc: 'distinct `candles` streams (market, interval and source)',
    option: 'candle-streams',
    perConnection: { field: 'maxCandleStreams', default: 50 },
    perAddress: { field: 'maxCandleStreamsPerAddress', default: 100 },
  },
};
