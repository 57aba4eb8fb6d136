/**
 * @module channels/candles/candles
 * The `candles` channel's Node-free part (docs/protocol.md "`candles` data"): its data, the state a
 * client keeps (the most recent {@link CANDLES_SNAPSHOT_SIZE} candles, each update's candles
 * replacing those of the same `start`), each message checked against its checksum.
 */

import type { CandleFields, CandleSourceOf } from '../candle-source.ts';
import { type Crc32, jsonChecksum } from '../checksum.ts';
import type { ChannelDefinition } from '../definition.ts';
import type { JsonValue } from '../records.ts';
import { candlesSince } from './since.ts';
import { isCandleOf } from './sources.ts';
import { candleIntervals, candlesStreamId, candlesStreamReader } from './streams.ts';

/**
 * Snapshot: the most recent candles, oldest first. Update: the candles new or changed, oldest
 * first. `C`: the candles of the channel's sources (../registry.ts composes them).
 */
export interface CandlesData<C extends CandleFields = CandleFields> {
  candles: C[];
  /**
   * Only in the snapshot of a subscription with `since` (docs/protocol.md "History since a time"):
   * the final candles of the range asked for that are older than every candle of `candles`, oldest
   * first. Not part of the stream's state, so no checksum covers it.
   */
  history?: C[];
}

/** A snapshot carries at most this many of the most recent candles (and a client keeps as many). */
export const CANDLES_SNAPSHOT_SIZE = 200;

/**
 * A candles update applied: each candle it carries replaces the one of the same `start` or joins
 * the list in time order, and only the most recent {@link CANDLES_SNAPSHOT_SIZE} are kept.
 */
export function applyCandlesUpdate<C extends CandleFields>(
  state: CandlesData<C>,
  update: CandlesData<C>,
): CandlesData<C> {
  const byStart = new Map<string, C>(state.candles.map((candle) => [candle.start, candle]));
  for (const candle of update.candles) byStart.set(candle.start, candle);
  const candles = [...byStart.values()].sort((a, b) => Date.parse(a.start) - Date.parse(b.start));
  return { candles: candles.slice(-CANDLES_SNAPSHOT_SIZE) };
}

/** A candles message's checksum: as `rest`'s, of the state `{ candles }` as canonical JSON. */
export function candlesChecksum(state: CandlesData, crc32?: Crc32): number {
  // Candles are JSON (strings, numbers, booleans) without an index signature.
  return jsonChecksum({ candles: state.candles as unknown as JsonValue[] }, crc32);
}

/** The channel over `sources`, whose candles are `C`. */
export function candlesChannel<C extends CandleFields>(
  sources: readonly CandleSourceOf[],
): ChannelDefinition<CandlesData<C>, CandlesData<C>> {
  const candlesStreamOf = candlesStreamReader(sources.map((source) => source.name));
  return {
    streamIds: {
      kind: 'of-market',
      canonical: (id) => {
        const stream = candlesStreamOf(id);
        return stream === undefined ? undefined : candlesStreamId(stream);
      },
      expected: `not a candles stream: a market UUID, ":", an interval (${candleIntervals.join(', ')}), ":" and a source (${sources.map((source) => source.name).join(', ')})`,
      marketOf: (id) => candlesStreamOf(id)?.market,
    },
    apply: applyCandlesUpdate,
    checksum: candlesChecksum,
    history: { check: candlesSince(sources, candlesStreamOf) },
    dataProblem: ({ data, checksum }) => {
      if (!Number.isSafeInteger(checksum)) return 'checksum';
      const candlesOf = (list: unknown) =>
        Array.isArray(list) && list.every((candle) => isCandleOf(sources, candle));
      if (!candlesOf(data.candles)) return 'candles';
      return data.history === undefined || candlesOf(data.history) ? undefined : 'history';
    },
  };
}
