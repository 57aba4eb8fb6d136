/**
 * @module protocol/book
 * The aggregated book as both ends hold it, how a `book` update is applied to it, its checksum
 * and its cut to a stream's depth (protocol.md "`book` data"). Used by the relay and by the browser client SDK, so that both apply
 * and checksum with the same code; no Node imports.
 *
 * States are treated as immutable: functions return new objects and may share unchanged sides and
 * level tuples with their inputs.
 */
import { type Crc32, portableCrc32 } from '../channels/checksum.ts';
import { isSortedBy } from '../util/sorted.ts';
import { compareDecimals } from './decimal.ts';
import type { BookData, Level } from './messages.ts';

/** Bids best (highest) first, asks best (lowest) first, one entry per price. */
export type BookState = BookData & { last_price?: string };

/** Negative when price `a` comes before price `b` on its side (is better). */
export type LevelOrder = (a: string, b: string) => number;

export const bidOrder: LevelOrder = (a, b) => compareDecimals(b, a);
export const askOrder: LevelOrder = (a, b) => compareDecimals(a, b);

/** protocol.md "`book` data": `"0"` means removed. Exactly that string: the relay never sends another zero. */
export const REMOVED_SIZE = '0';

/** Levels the checksum covers per side (protocol.md "checksum": i = 0 .. 24). */
export const CHECKSUM_LEVELS = 25;

/**
 * Applies an update (or a full snapshot as an update) to a state: size `"0"` removes a level, any
 * other size inserts or replaces it (with the update's price text), `last_price` is replaced when
 * present. Merges the two best-first lists in O(n + m).
 */
export function applyBookUpdate(state: BookState, update: BookData): BookState {
  const next: BookState = {
    bids: applySide(state.bids, update.bids, bidOrder),
    asks: applySide(state.asks, update.asks, askOrder),
  };
  const lastPrice = update.last_price ?? state.last_price;
  if (lastPrice !== undefined) next.last_price = lastPrice;
  return next;
}

function applySide(levels: Level[], changes: readonly Level[], order: LevelOrder): Level[] {
  if (changes.length === 0) return levels;
  // The relay sends changes best first; a client SDK may be fed anything, so sort when it is not.
  const byPrice = (x: Level, y: Level): number => order(x[0], y[0]);
  const sorted = isSortedBy(changes, byPrice) ? changes : [...changes].sort(byPrice);
  const merged: Level[] = [];
  let i = 0;
  let j = 0;
  while (j < sorted.length) {
    let change = sorted[j]!;
    // Several changes to one price: the last one wins (the sort above is stable).
    while (j + 1 < sorted.length && order(change[0], sorted[j + 1]![0]) === 0) change = sorted[++j]!;
    j++;
    // Keep the levels before the change's price; drop the one at it (replaced or removed).
    while (i < levels.length) {
      const c = order(levels[i]![0], change[0]);
      if (c > 0) break;
      if (c === 0) {
        i++;
        break;
      }
      merged.push(levels[i++]!);
    }
    if (change[1] !== REMOVED_SIZE) merged.push(change);
  }
  while (i < levels.length) merged.push(levels[i++]!);
  return merged;
}

/**
 * The checksum's input (protocol.md "checksum"): for i = 0 .. 24, `bid[i].price:bid[i].size:` if
 * that bid exists, then `ask[i].price:ask[i].size:` if that ask exists; the final `:` dropped.
 */
export function bookChecksumInput(state: BookState): string {
  let input = '';
  for (let i = 0; i < CHECKSUM_LEVELS; i++) {
    const bid = state.bids[i];
    const ask = state.asks[i];
    if (bid === undefined && ask === undefined) break;
    if (bid !== undefined) input += bid[0] + ':' + bid[1] + ':';
    if (ask !== undefined) input += ask[0] + ':' + ask[1] + ':';
  }
  return input.slice(0, -1);
}

/** CRC-32 of the UTF-8 checksum input, unsigned; an empty book gives 0. */
export function bookChecksum(state: BookState, crc32: Crc32 = portableCrc32): number {
  return crc32(bookChecksumInput(state));
}
