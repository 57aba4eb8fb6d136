/**
 * @module channels/candles/relay
 * The `candles` channel's server part: its diff and checksum, what each stream keeps and reads per
 * poll (./relay-keeper.ts), which relay/targets/kept-target.ts polls, and the bound on the streams
 * one connection and one client address may hold.
 */
import { crc32 } from 'node:zlib';
import type { RelayChannel } from '../relay-definition.ts';
import { type CandlesData, candlesChecksum } from './candles.ts';
import { CandlesKeeper, type CandlesUpstream } from './relay-keeper.ts';
import type { CandlesEventMap } from './relay-trade-prints.ts';
import type { Candle } from './sources.ts';

/** The candles of `next` new or changed since `prev` (compared by `start`), oldest first. */
export function diffCandles(prev: CandlesData, next: CandlesData): CandlesData | null {
  const before = new Map(prev.candles.map((candle) => [candle.start, candle]));
  const candles = next.candles.filter((candle) => {
    const old = before.get(candle.start);
    return old === undefined || !sameCandle(old, candle);
  });
  return candles.length === 0 ? null : { candles };
}

/** Every field the same, whichever source's fields the candles carry (all of them strings, numbers or booleans). */
function sameCandle(a: Candle, b: Candle): boolean {
  const fields = Object.entries(a);
  const other = new Map<string, unknown>(Object.entries(b));
  return fields.length === other.size && fields.every(([field, value]) => other.get(field) === value);
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
  CandlesEventMap,
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
