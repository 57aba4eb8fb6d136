/**
 * @module sim/book-evolution
 * How a simulated book moves: seeding a realistic book (typically 10-60 levels per side, often 2-5
 * orders per level, varied size precision) and one random step of order flow (arrivals,
 * cancellations, trades that fill orders partly or fully). Every step changes the book, so a poll
 * after a tick always sees something new (the integration tests count polls on that basis).
 */
import type { BookSide, Fill, SimOrderBook } from './order-book.ts';
import type { Prng } from './prng.ts';

/** Prices in 1e-8 units: upstream markets trade between 0.01 and 0.99. */
export const MIN_PRICE = 1_000_000;
export const MAX_PRICE = 99_000_000;
export const MAX_LEVELS = 60;
const CENT = 1_000_000;

export interface EvolutionContext {
  rng: Prng;
  /** Price increment in 1e-8 units (0.01 or 0.001). */
  tickSize: number;
  /** The price the market "believes in" (1e-8 units, a multiple of tickSize); books form around it. */
  fair: number;
  /** A market quoted on the bid side only: it has no best ask, hence no price data (docs/upstream.md). */
  oneSided: boolean;
  nextOrderId: () => string;
}

/**
 * A size in 1e-6 units with varied precision: whole ("10"), one decimal ("125.5"), three decimals
 * ("3.125") and, rarely, dust ("0.000001"), so consumers must sum decimals exactly.
 */
export function randomSize(rng: Prng): number {
  const draw = rng.next();
  if (draw < 0.45) return rng.int(1, 500) * 1_000_000;
  if (draw < 0.7) return rng.int(1, 2_000) * 100_000;
  if (draw < 0.95) return rng.int(1, 20_000) * 1_000;
  return rng.int(1, 9);
}

/** Resting orders per side around which arrivals and cancellations balance. */
const TARGET_ORDERS_PER_SIDE = 110;
/** Relative weight of a trade against the best level, next to an arrival (weight 1). */
const TRADE_WEIGHT = 0.4;

export function seedBook(book: SimOrderBook, context: EvolutionContext): void {
  const sides: BookSide[] = context.oneSided ? ['bids'] : ['bids', 'asks'];
  for (const side of sides) {
    const orders = context.rng.int(TARGET_ORDERS_PER_SIDE / 2, TARGET_ORDERS_PER_SIDE * 1.5);
    for (let n = 0; n < orders; n++) arrive(book, context, side);
  }
}

/** One step of order flow; returns the trades it made. The book always changes. */
export function evolveBook(book: SimOrderBook, context: EvolutionContext): Fill[] {
  const { rng } = context;
  const fills: Fill[] = [];
  const actions = rng.int(1, 4);
  for (let n = 0; n < actions; n++) {
    const side = randomSide(context);
    // Cancellations grow with the resting orders, so each side hovers around its target depth.
    const cancelWeight = book.orderCount(side) / TARGET_ORDERS_PER_SIDE;
    const tradeWeight = context.oneSided ? 0 : TRADE_WEIGHT;
    const draw = rng.next() * (1 + cancelWeight + tradeWeight);
    let fill: Fill | undefined;
    if (draw >= 1 + cancelWeight) fill = tradeAtBest(book, context);
    else if (draw < 1 || !cancelOrder(book, context, side)) fill = arrive(book, context, side);
    if (fill) fills.push(fill);
  }
  replenish(book, context);
  trimDepth(book);
  return fills;
}

function randomSide(context: EvolutionContext): BookSide {
  return context.oneSided || context.rng.chance(0.5) ? 'bids' : 'asks';
}

function clampPrice(side: BookSide, price: number, tickSize: number): number {
  const low = side === 'asks' ? MIN_PRICE + tickSize : MIN_PRICE;
  const high = side === 'bids' ? MAX_PRICE - tickSize : MAX_PRICE;
  return Math.min(high, Math.max(low, price));
}

/**
 * A limit order arrives some ticks away from the fair price, mostly close to it (so the touch
 * refills after trades). In 0.001-tick markets most orders still pick round half-cent prices, so
 * levels hold several orders there too. A distance past 0.01/0.99 wraps back inside the range
 * rather than piling orders on the bound. An order that would cross the book trades against the
 * opposite best level instead (its remainder is dropped): that is how books follow the fair price.
 */
function arrive(book: SimOrderBook, context: EvolutionContext, side: BookSide): Fill | undefined {
  const { rng, tickSize, fair } = context;
  const fine = tickSize < CENT;
  const direction = side === 'bids' ? -1 : 1;
  const bound = clampPrice(side, direction * Number.MAX_SAFE_INTEGER, tickSize);
  const room = Math.max(1, Math.abs(bound - fair) / tickSize);
  let distance = 1 + Math.floor(rng.next() ** 2.5 * (fine ? 400 : 40));
  if (fine && rng.chance(0.85)) distance = Math.ceil(distance / 5) * 5;
  if (distance > room) distance = 1 + ((distance - 1) % room);
  const price = clampPrice(side, fair + direction * distance * tickSize, tickSize);
  const size = randomSize(rng);
  if (book.accepts(side, price)) {
    book.add(side, price, { id: context.nextOrderId(), size });
    return undefined;
  }
  return book.take(side === 'bids' ? 'asks' : 'bids', size);
}

/** Cancels a random resting order, but never the last one of a side. */
function cancelOrder(book: SimOrderBook, context: EvolutionContext, side: BookSide): boolean {
  if (book.orderCount(side) <= 1) return false;
  const levelIndex = context.rng.int(0, book[side].length - 1);
  const level = book[side][levelIndex]!;
  book.cancel(side, levelIndex, context.rng.int(0, level.orders.length - 1));
  return true;
}

/** A marketable order hits the best level: a dust-to-whole-level size, so fills are partial or full. */
function tradeAtBest(book: SimOrderBook, context: EvolutionContext): Fill | undefined {
  const { rng } = context;
  const side: BookSide = rng.chance(0.5) ? 'bids' : 'asks';
  const level = book[side][0];
  if (!level) return undefined;
  const levelSize = level.orders.reduce((sum, order) => sum + order.size, 0);
  const size = rng.chance(0.25) ? levelSize : Math.min(levelSize, randomSize(rng));
  return book.take(side, size);
}

/** Keeps quoted sides non-empty after trades and cancellations, quoting next to the opposite side. */
function replenish(book: SimOrderBook, context: EvolutionContext): void {
  const sides: BookSide[] = context.oneSided ? ['bids'] : ['bids', 'asks'];
  for (const side of sides) {
    if (book[side].length > 0) continue;
    const direction = side === 'bids' ? -1 : 1;
    const opposite = book.best(side === 'bids' ? 'asks' : 'bids');
    let price = context.fair + direction * context.tickSize;
    if (opposite !== undefined && !book.accepts(side, price)) price = opposite + direction * context.tickSize;
    price = clampPrice(side, price, context.tickSize);
    if (book.accepts(side, price))
      book.add(side, price, { id: context.nextOrderId(), size: randomSize(context.rng) });
  }
}

/** At most MAX_LEVELS levels per side: the deepest ones are withdrawn. */
function trimDepth(book: SimOrderBook): void {
  for (const side of ['bids', 'asks'] as const) {
    if (book[side].length > MAX_LEVELS) book[side].length = MAX_LEVELS;
  }
}
