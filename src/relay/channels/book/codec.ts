/**
 * @module relay/channels/book/codec
 * The `book` channel's codec (protocol.md "`book` data") and how a market's `book` streams are
 * numbered as one target. Its state is the sorted, aggregated levels (./levels.ts), diffed level by
 * level, and each message carries the checksum of the levels after it. The target numbers the whole
 * book and every depth, each cut from the target's full levels and updated with the wire package's
 * apply.
 */
import { crc32 } from 'node:zlib';
import {
  applyBookUpdate,
  type BookState,
  bookChecksum,
  type LevelOrder,
  REMOVED_SIZE,
} from '../../../../packages/protocol/src/protocol/book.ts';
import {
  type BookData,
  type BookDepth,
  bookDepths,
  type Level,
} from '../../../../packages/protocol/src/protocol/messages.ts';
import type { TargetNumbering } from '../relay-definition.ts';
import { comparePriceTexts } from './checked-decimals.ts';

export const bookNumbering: TargetNumbering<'book', BookState, BookData> = {
  channel: 'book',
  diff: diffBook,
  // Node's native CRC-32: about a third of the portable one's time, on every book message.
  checksum: (state) => bookChecksum(state, crc32),
  streams: [null, ...bookDepths].map((depth) => ({ field: depth === null ? 'full' : String(depth), depth })),
  project: (state, depth) => limitDepth(state, depth ?? null),
  apply: applyBookUpdate,
};

/**
 * The levels that differ between `prev` and `next`, best first per side: `[price, newSize]` for a
 * level added or resized, `[price, "0"]` for one gone; `last_price` only when it changed. Diffing
 * two depth-limited states yields the levels entering and leaving the window, as protocol.md asks.
 *
 * Levels match by numeric price, but a level is sent when its price or size TEXT changed: sums
 * print with the precision of the sizes summed, so "3.50" can become "3.5" when an order
 * leaves, and the client must end up with the relay's exact text for the checksum (computed over
 * text) to match.
 *
 * No update is sent for a poll that changed nothing (protocol.md "Sequencing"), hence `null` for no
 * change. A `last_price` that disappears cannot be expressed in an update; upstream always sends one.
 */
export function diffBook(prev: BookState, next: BookState): BookData | null {
  const bids = diffSide(prev.bids, next.bids, bidOrder);
  const asks = diffSide(prev.asks, next.asks, askOrder);
  const lastPriceChanged = next.last_price !== undefined && next.last_price !== prev.last_price;
  if (bids.length === 0 && asks.length === 0 && !lastPriceChanged) return null;
  const update: BookData = { bids, asks };
  if (lastPriceChanged) update.last_price = next.last_price;
  return update;
}

/** Bids best (highest) first, asks best (lowest) first: the wire package's level order, for prices of upstream's checked form. */
const bidOrder: LevelOrder = (a, b) => comparePriceTexts(b, a);
const askOrder: LevelOrder = (a, b) => comparePriceTexts(a, b);

/** Linear merge of two best-first lists. */
function diffSide(prev: readonly Level[], next: readonly Level[], order: LevelOrder): Level[] {
  const changes: Level[] = [];
  if (prev === next) return changes;
  let i = 0;
  let j = 0;
  while (i < prev.length && j < next.length) {
    const before = prev[i]!;
    const after = next[j]!;
    const c = order(before[0], after[0]);
    if (c < 0) {
      changes.push([before[0], REMOVED_SIZE]);
      i++;
    } else if (c > 0) {
      changes.push(after);
      j++;
    } else {
      if (before[0] !== after[0] || before[1] !== after[1]) changes.push(after);
      i++;
      j++;
    }
  }
  for (; i < prev.length; i++) changes.push([prev[i]![0], REMOVED_SIZE]);
  for (; j < next.length; j++) changes.push(next[j]!);
  return changes;
}

/**
 * The best `depth` levels per side (protocol.md "`book` data", `depth`); null keeps the full book.
 * The relay's alone: a client takes the cut it is sent.
 */
export function limitDepth(state: BookState, depth: BookDepth): BookState {
  if (depth === null || (state.bids.length <= depth && state.asks.length <= depth)) return state;
  const limited: BookState = { bids: state.bids.slice(0, depth), asks: state.asks.slice(0, depth) };
  if (state.last_price !== undefined) limited.last_price = state.last_price;
  return limited;
}
