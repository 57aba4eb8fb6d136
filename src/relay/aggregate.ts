/**
 * @module relay/aggregate
 * Turns an upstream order book (one entry per order) into the aggregated price levels the `book`
 * channel carries (protocol.md "`book` data"), and cuts it to a stream's depth.
 */
import { askOrder, type BookState, bidOrder, type LevelOrder } from '../protocol/book.ts';
import { compareDecimals, isZeroDecimal, sumDecimals } from '../protocol/decimal.ts';
import type { BookDepth, Level } from '../protocol/messages.ts';
import type { OrderBook, OrderEntry } from '../upstream/schemas.ts';
import { isSortedBy } from '../util/sorted.ts';

/**
 * One level per price and side, sized with the exact sum of its orders' sizes; levels whose total
 * is zero are dropped; bids best (highest) first, asks best (lowest) first; `last_price` from upstream.
 * Prices compare numerically but keep upstream's text: of several spellings of one price, the
 * first order's wins.
 */
export function aggregateBook(book: OrderBook): BookState {
  return {
    bids: aggregateSide(book.bids, bidOrder),
    asks: aggregateSide(book.asks, askOrder),
    last_price: book.last_price,
  };
}

function aggregateSide(orders: readonly OrderEntry[], order: LevelOrder): Level[] {
  // Upstream usually lists orders best first already; a stable sort keeps first-seen text first.
  const byPrice = (x: OrderEntry, y: OrderEntry): number => order(x.price, y.price);
  const sorted = isSortedBy(orders, byPrice) ? orders : [...orders].sort(byPrice);
  const levels: Level[] = [];
  let start = 0;
  while (start < sorted.length) {
    const first = sorted[start]!;
    let end = start + 1;
    while (end < sorted.length && compareDecimals(sorted[end]!.price, first.price) === 0) end++;
    // A single order's size is used as-is: no big.js on the common path.
    const size = end - start === 1 ? first.size : sumDecimals(sizesOf(sorted, start, end));
    if (!isZeroDecimal(size)) levels.push([first.price, size]);
    start = end;
  }
  return levels;
}

function sizesOf(orders: readonly OrderEntry[], start: number, end: number): string[] {
  const sizes: string[] = [];
  for (let k = start; k < end; k++) sizes.push(orders[k]!.size);
  return sizes;
}

/** The best `depth` levels per side (protocol.md "`book` data", `depth`); null keeps the full book. */
export function limitDepth(state: BookState, depth: BookDepth): BookState {
  if (depth === null || (state.bids.length <= depth && state.asks.length <= depth)) return state;
  const limited: BookState = { bids: state.bids.slice(0, depth), asks: state.asks.slice(0, depth) };
  if (state.last_price !== undefined) limited.last_price = state.last_price;
  return limited;
}
