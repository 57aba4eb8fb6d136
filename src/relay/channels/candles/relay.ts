/**
 * @module relay/channels/candles/relay
 * The `candles` channel's server part: its diff and checksum, what each stream keeps and reads per
 * poll (./relay-keeper.ts), which relay/poll/kept-target.ts polls, its history since a time
 * (./relay-since.ts), and the bound on the streams one connection and one client address may hold.
 */
import { crc32 } from 'node:zlib';
import type { CandleFields } from '../../../../packages/protocol/src/channels/candle-source.ts';
import {
  type CandlesData,
  candlesChecksum,
} from '../../../../packages/protocol/src/channels/candles/candles.ts';
import type { RelayCandleSource } from '../relay-candle-source.ts';
import type { EventArgs, RelayChannel } from '../relay-definition.ts';
import { candlesKeeper } from './relay-keeper.ts';
import { candlesHistory } from './relay-since.ts';

/** The candles of `next` new or changed since `prev` (compared by `start`), oldest first. */
export function diffCandles<C extends CandleFields>(
  prev: CandlesData<C>,
  next: CandlesData<C>,
): CandlesData<C> | null {
  const before = new Map(prev.candles.map((candle) => [candle.start, candle]));
  const candles = next.candles.filter((candle) => {
    const old = before.get(candle.start);
    return old === undefined || !sameCandle(old, candle);
  });
  return candles.length === 0 ? null : { candles };
}

/** Every field the same, whichever source's fields the candles carry (all of them strings, numbers or booleans). */
function sameCandle(a: CandleFields, b: CandleFields): boolean {
  const fields = Object.entries(a);
  const other = new Map<string, unknown>(Object.entries(b));
  return fields.length === other.size && fields.every(([field, value]) => other.get(field) === value);
}

/** Distinct `candles` streams, per connection and per address group (`--max-candle-streams`). */
export interface CandlesGroupLimits {
  maxCandleStreams: number;
  maxCandleStreamsPerAddress: number;
}

/** The channel's server part over `sources` (each read by its own upstream calls, emitting its own events), whose candles are `C`. */
export function candlesRelay<U, E extends EventArgs<E>, C extends CandleFields>(
  sources: readonly RelayCandleSource<U, E>[],
): RelayChannel<U, CandlesData<C>, CandlesData<C>, E, CandlesGroupLimits> {
  return {
    // Node's native CRC-32 on every message.
    codec: { diff: diffCandles, checksum: (state) => candlesChecksum(state, crc32) },
    kept: candlesKeeper<U, E, C>(sources),
    history: candlesHistory<U, E, C>(sources),
    groupBound: {
      noun: 'candles streams',
      doc: 'distinct `candles` streams (market, interval and source)',
      option: 'candle-streams',
      perConnection: { field: 'maxCandleStreams', default: 50 },
      perAddress: { field: 'maxCandleStreamsPerAddress', default: 100 },
    },
  };
}
