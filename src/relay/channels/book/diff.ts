/**
 * @module relay/channels/book/diff
 * What changed between two successive states of a `book` stream, as the `update` data of
 * protocol.md ("`book` data"). No update is sent for a poll that changed nothing
 * (protocol.md "Sequencing"), hence `null` for no change.
 */
import {
  askOrder,
  type BookState,
  bidOrder,
  type LevelOrder,
  REMOVED_SIZE,
} from '../../../../packages/protocol/src/protocol/book.ts';
import type { BookData, Level } from '../../../../packages/protocol/src/protocol/messages.ts';

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
 * A `last_price` that disappears cannot be expressed in an update; upstream always sends one.
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
