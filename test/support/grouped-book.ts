/**
 * @module test/support/grouped-book
 * Upstream's order book summed by hand into a group step (docs/protocol.md "Grouped books"), apart
 * from the relay's code, which the grouped-book tests compare the relay's streams and the SDK's
 * states with.
 */
import Big from 'big.js';
import type { BookState } from '../../packages/protocol/src/protocol/book.ts';
import type { BookDepth, Level } from '../../packages/protocol/src/protocol/messages.ts';
import type { OrderBook, OrderEntry } from '../../src/upstream/schemas.ts';

/** A decimal string in units of 0.00000001, upstream's price precision (no binary float on the way). */
function units(text: string): bigint {
  const [whole = '0', fraction = ''] = text.split('.');
  return BigInt(whole + fraction.padEnd(8, '0'));
}

function priceText(value: bigint): string {
  const digits = value.toString().padStart(9, '0');
  return `${digits.slice(0, -8)}.${digits.slice(-8)}`;
}

function places(text: string): number {
  const dot = text.indexOf('.');
  return dot === -1 ? 0 : text.length - dot - 1;
}

/**
 * Upstream's orders summed by hand into multiples of `step`, independently of the relay's code:
 * every order's price floored (bids) or ceiled (asks) to the step in integer units, the sizes of a
 * group added exactly and printed with the most decimal places of any order in it.
 */
export function summedByHand(book: OrderBook, step: string, depth: BookDepth): BookState {
  const unit = units(step);
  const side = (orders: readonly OrderEntry[], round: 'down' | 'up'): Level[] => {
    const groups = new Map<bigint, string[]>();
    for (const { price, size } of orders) {
      const at = units(price);
      const key = round === 'down' ? (at / unit) * unit : ((at + unit - 1n) / unit) * unit;
      groups.set(key, [...(groups.get(key) ?? []), size]);
    }
    const levels = [...groups]
      .sort(([a], [b]) => (a === b ? 0 : a < b === (round === 'up') ? -1 : 1))
      .map(([key, sizes]): Level => {
        const total = sizes.reduce((sum, size) => sum.plus(size), new Big(0));
        return [priceText(key), total.toFixed(Math.max(...sizes.map(places)))];
      })
      .filter(([, size]) => !new Big(size).eq(0));
    return depth === null ? levels : levels.slice(0, depth);
  };
  return { bids: side(book.bids, 'down'), asks: side(book.asks, 'up'), last_price: book.last_price };
}
