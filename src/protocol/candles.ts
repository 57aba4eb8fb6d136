/**
 * @module protocol/candles
 * The `candles` channel's state as a client keeps it (docs/protocol.md "`candles` data"): the most
 * recent {@link CANDLES_SNAPSHOT_SIZE} candles, each update's candles replacing those of the same
 * `start`, each message checked against its checksum. Pure and shared by the relay and the SDK.
 */
import type { Crc32 } from './book.ts';
import { restChecksum } from './json-patch.ts';
import type { Candle, CandlesData, JsonValue } from './messages.ts';

/** A snapshot carries at most this many of the most recent candles (and a client keeps as many). */
export const CANDLES_SNAPSHOT_SIZE = 200;

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
