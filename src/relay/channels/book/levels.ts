/**
 * @module relay/channels/book/levels
 * Turns upstream's order book of a market (one entry per order) into the aggregated price levels
 * the `book` channel carries (protocol.md "`book` data"), the last step of reading a polled book:
 * the orders come parsed, or as spans of the body the reader (./reader.ts) left them in, whose
 * prices are compared where they sit; either way only the levels kept become new strings. The
 * relay's book target builds its streams' states with it.
 */

import type { BookState } from '../../../../packages/protocol/src/protocol/book.ts';
import type { BookDepth, Level } from '../../../../packages/protocol/src/protocol/messages.ts';
import type { OrderBook, OrderEntry } from '../../../upstream/schemas.ts';
import { comparePriceSpans, comparePriceTexts, isZeroText, sumSizes } from './checked-decimals.ts';

/**
 * One side's orders as aggregation reads them, by index in upstream's order: parsed orders
 * (`entriesOf`) or a body's spans (`OrderSpans`), so either way only the levels kept
 * become new strings.
 */
export interface OrderSide {
  readonly length: number;
  /** Numeric comparison of two orders' prices: negative when order `a`'s is lower. */
  compare(a: number, b: number): number;
  price(order: number): string;
  size(order: number): string;
}

/** A book's two sides and last price, whichever way its orders are held. */
export interface SidedBook {
  bids: OrderSide;
  asks: OrderSide;
  last_price: string;
}

/**
 * One level per price and side, sized with the exact sum of its orders' sizes; levels whose total
 * is zero are dropped; bids best (highest) first, asks best (lowest) first; `last_price` from upstream.
 * Prices compare numerically but keep upstream's text: of several spellings of one price, the
 * first order's wins. With a `depth`, only the best `depth` levels per side are built (what
 * `limitDepth` (./codec.ts) of the whole would give): the orders beyond are only checked for
 * their order.
 */
export function aggregateBook(book: OrderBook, depth: BookDepth = null): BookState {
  return aggregateSides(
    { bids: entriesOf(book.bids), asks: entriesOf(book.asks), last_price: book.last_price },
    depth,
  );
}

/** `aggregateBook` of a book however its orders are held. */
export function aggregateSides(book: SidedBook, depth: BookDepth = null): BookState {
  const levels = depth ?? Number.POSITIVE_INFINITY;
  return {
    bids: aggregateSide(book.bids, BIDS, levels),
    asks: aggregateSide(book.asks, ASKS, levels),
    last_price: book.last_price,
  };
}

/** Parsed orders as an OrderSide. */
export function entriesOf(orders: readonly OrderEntry[]): OrderSide {
  return {
    length: orders.length,
    compare: (a, b) => comparePriceTexts(orders[a]!.price, orders[b]!.price),
    price: (order) => orders[order]!.price,
    size: (order) => orders[order]!.size,
  };
}

/**
 * One side's orders in body order, each a price and a size as [start, end) byte spans of the body
 * (./reader.ts finds them): compared and turned into strings only when asked.
 */
export class OrderSpans implements OrderSide {
  readonly #body: Buffer;
  /** Per order four offsets: price start, price end, size start, size end. */
  readonly #offsets: readonly number[];

  constructor(body: Buffer, offsets: readonly number[]) {
    this.#body = body;
    this.#offsets = offsets;
  }

  get length(): number {
    return this.#offsets.length >> 2;
  }

  price(order: number): string {
    const at = order << 2;
    return this.#body.toString('latin1', this.#offsets[at]!, this.#offsets[at + 1]!);
  }

  size(order: number): string {
    const at = order << 2;
    return this.#body.toString('latin1', this.#offsets[at + 2]!, this.#offsets[at + 3]!);
  }

  /** Numeric comparison of two orders' prices, as `comparePriceTexts` of their texts would give. */
  compare(a: number, b: number): number {
    const offsets = this.#offsets;
    const at = a << 2;
    const bt = b << 2;
    return comparePriceSpans(this.#body, offsets[at]!, offsets[at + 1]!, offsets[bt]!, offsets[bt + 1]!);
  }
}

/** Which way a side's best comes first: bids highest, asks lowest. */
const BIDS = -1;
const ASKS = 1;
type Direction = typeof BIDS | typeof ASKS;

/**
 * Upstream usually lists orders best first already: then one comparison per neighbouring pair both
 * checks the order and finds the levels. Otherwise a stable sort (first-seen text stays first) and
 * the same walk again.
 */
function aggregateSide(side: OrderSide, direction: Direction, depth: number): Level[] {
  return (
    levelsInOrder(side, undefined, direction, depth) ??
    levelsInOrder(side, sorted(side, direction), direction, depth)!
  );
}

/** The orders' indices best first; ties keep upstream's order. */
function sorted(side: OrderSide, direction: Direction): number[] {
  const indices = Array.from({ length: side.length }, (_, k) => k);
  return indices.sort((a, b) => direction * side.compare(a, b));
}

/**
 * The best `depth` levels of the orders taken in `order` (default: as they are); undefined as soon
 * as two are out of order (checked to the last order, so a better price further down is never missed).
 */
function levelsInOrder(
  side: OrderSide,
  order: readonly number[] | undefined,
  direction: Direction,
  depth: number,
): Level[] | undefined {
  const at = order === undefined ? (k: number) => k : (k: number) => order[k]!;
  const levels: Level[] = [];
  let start = 0;
  while (start < side.length) {
    const first = at(start);
    let end = start + 1;
    for (; end < side.length; end++) {
      const c = direction * side.compare(first, at(end));
      if (c > 0) return undefined;
      if (c < 0) break;
    }
    if (levels.length < depth) {
      // A single order's size is used as-is: no sum on the common path.
      const size = end - start === 1 ? side.size(first) : sumSizes(sizesOf(side, at, start, end));
      if (!isZeroText(size)) levels.push([side.price(first), size]);
    }
    start = end;
  }
  return levels;
}

function sizesOf(side: OrderSide, at: (k: number) => number, start: number, end: number): string[] {
  const sizes: string[] = [];
  for (let k = start; k < end; k++) sizes.push(side.size(at(k)));
  return sizes;
}
