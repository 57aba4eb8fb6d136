/**
 * @module sim/order-book
 * One market's central limit order book as mutable state: price levels with several resting orders
 * each, in time priority (FIFO). Prices are integers in 1e-8 units and sizes integers in 1e-6 units
 * (sim/decimal), so nothing is rounded. The book never crosses: a bid is always below every ask.
 */

export type BookSide = 'bids' | 'asks';

export interface RestingOrder {
  id: string;
  /** 1e-6 units. */
  size: number;
}

export interface PriceLevel {
  /** 1e-8 units. */
  price: number;
  orders: RestingOrder[];
}

/** A trade against the best level of one side. */
export interface Fill {
  price: number;
  size: number;
  /** The side of the book that was hit. */
  restingSide: BookSide;
}

export class SimOrderBook {
  /** Best (highest) first. */
  readonly bids: PriceLevel[] = [];
  /** Best (lowest) first. */
  readonly asks: PriceLevel[] = [];

  best(side: BookSide): number | undefined {
    return this[side][0]?.price;
  }

  orderCount(side: BookSide): number {
    return this[side].reduce((count, level) => count + level.orders.length, 0);
  }

  /** Whether a resting order at `price` on `side` keeps the book uncrossed. */
  accepts(side: BookSide, price: number): boolean {
    const opposite = this.best(side === 'bids' ? 'asks' : 'bids');
    if (opposite === undefined) return true;
    return side === 'bids' ? price < opposite : price > opposite;
  }

  /** Queues the order at the back of its level (time priority), creating the level if needed. */
  add(side: BookSide, price: number, order: RestingOrder): void {
    if (!this.accepts(side, price)) throw new RangeError(`order at ${price} would cross the book`);
    if (order.size <= 0) throw new RangeError('order size must be positive');
    const levels = this[side];
    const better = (a: number, b: number): boolean => (side === 'bids' ? a > b : a < b);
    let index = 0;
    while (index < levels.length && better(levels[index]!.price, price)) index++;
    const existing = levels[index];
    if (existing?.price === price) existing.orders.push(order);
    else levels.splice(index, 0, { price, orders: [order] });
  }

  /** Removes one resting order; its level goes when it empties. */
  cancel(side: BookSide, levelIndex: number, orderIndex: number): void {
    const level = this[side][levelIndex];
    if (!level?.orders[orderIndex]) throw new RangeError('no such order');
    level.orders.splice(orderIndex, 1);
    if (level.orders.length === 0) this[side].splice(levelIndex, 1);
  }

  /**
   * An incoming order of `size` trades against the best level of `side`, oldest order first; it
   * can fill part of one order or several orders, but never walks past that one level.
   */
  take(side: BookSide, size: number): Fill | undefined {
    const level = this[side][0];
    if (!level || size <= 0) return undefined;
    let remaining = size;
    while (remaining > 0 && level.orders.length > 0) {
      const head = level.orders[0]!;
      const traded = Math.min(head.size, remaining);
      head.size -= traded;
      remaining -= traded;
      if (head.size === 0) level.orders.shift();
    }
    if (level.orders.length === 0) this[side].shift();
    return { price: level.price, size: size - remaining, restingSide: side };
  }

  clear(): void {
    this.bids.length = 0;
    this.asks.length = 0;
  }
}
