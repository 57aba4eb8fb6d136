/**
 * @module relay/aggregate
 * Turns an upstream order book (one entry per order) into the aggregated price levels the `book`
 * channel carries (protocol.md "`book` data"), and cuts it to a stream's depth.
 */
import { askOrder, type BookState, bidOrder, type LevelOrder } from '../protocol/book.ts';
import { isZeroDecimal, sumDecimals } from '../protocol/decimal.ts';
import type { BookDepth, Level } from '../protocol/messages.ts';
import type { OrderBook, OrderEntry } from '../upstream/schemas.ts';

/**
 * One level per price and side, sized with the exact sum of its orders' sizes; levels whose total
 * is zero are dropped; bids best (highest) first, asks best (lowest) first; `last_price` from upstream.
 * Prices compare numerically but keep upstream's text: of several spellings of one price, the
 * first order's wins. With a `depth`, only the best `depth` levels per side are built (what
 * `limitDepth` of the whole would give): the orders beyond are only checked for their order.
 */
export function aggregateBook(book: OrderBook, depth: BookDepth = null): BookState {
  const levels = depth ?? Number.POSITIVE_INFINITY;
  return {
    bids: aggregateSide(book.bids, bidOrder, byBidPrice, levels),
    asks: aggregateSide(book.asks, askOrder, byAskPrice, levels),
    last_price: book.last_price,
  };
}

// Module-level comparators: the side's order applied to orders, made once, not once per poll.
const byBidPrice = (x: OrderEntry, y: OrderEntry): number => bidOrder(x.price, y.price);
const byAskPrice = (x: OrderEntry, y: OrderEntry): number => askOrder(x.price, y.price);

/**
 * Upstream usually lists orders best first already: then one comparison per neighbouring pair both
 * checks the order and finds the levels. Otherwise a stable sort (first-seen text stays first) and
 * the same walk again.
 */
function aggregateSide(
  orders: readonly OrderEntry[],
  order: LevelOrder,
  byPrice: (x: OrderEntry, y: OrderEntry) => number,
  depth: number,
): Level[] {
  return levelsOfSorted(orders, order, depth) ?? levelsOfSorted([...orders].sort(byPrice), order, depth)!;
}

/**
 * The best `depth` levels of orders already best first; undefined as soon as two are out of order
 * (checked to the last order, so a better price further down is never missed).
 */
function levelsOfSorted(
  orders: readonly OrderEntry[],
  order: LevelOrder,
  depth: number,
): Level[] | undefined {
  const levels: Level[] = [];
  let start = 0;
  while (start < orders.length) {
    const first = orders[start]!;
    let end = start + 1;
    for (; end < orders.length; end++) {
      const c = order(first.price, orders[end]!.price);
      if (c > 0) return undefined;
      if (c < 0) break;
    }
    if (levels.length < depth) {
      // A single order's size is used as-is: no big.js on the common path.
      const size = end - start === 1 ? first.size : sumDecimals(sizesOf(orders, start, end));
      if (!isZeroDecimal(size)) levels.push([first.price, size]);
    }
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
