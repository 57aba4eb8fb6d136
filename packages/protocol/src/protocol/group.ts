/**
 * @module protocol/group
 * Grouped books (docs/protocol.md "Grouped books"): a `book` subscription's `group` step, which steps
 * are offered, and the pure function that sums a book's levels into multiples of the step. Shared
 * by the relay (which groups once per poll for every subscriber) and the client SDKs (which check
 * a step before anything is sent); no Node imports.
 *
 * Bids are rounded DOWN to a multiple of the step and asks UP, so a grouped level never shows a
 * better price than exists: the grouped best bid is at most the real best bid, the grouped best ask
 * at least the real best ask, and a book that was not crossed stays uncrossed.
 */
import Big from 'big.js';
import type { BookState } from './book.ts';
import { sumDecimals } from './decimal.ts';
import type { Level } from './messages.ts';

/**
 * The steps offered. Upstream publishes no tick size per market (docs/upstream.md: markets carry no
 * such field), only prices with 8 decimal places, so the one tick the relay can rely on is
 * 0.00000001: every step here is a multiple of it, and of the 0.001 and 0.01 ticks seen in practice.
 * A step finer than a market's own tick gives its book back ungrouped.
 */
export const bookGroups = ['0.001', '0.002', '0.005', '0.01', '0.02', '0.05', '0.1'] as const;
export type BookGroup = (typeof bookGroups)[number];

/** The one message a bad `group` gets, naming every step offered. */
export const groupExpected = `expected one of ${bookGroups.map((step) => `"${step}"`).join(', ')} (a decimal string: the price step levels are summed into)`;

/** Upstream's prices have 8 decimal places: the finest price, and the places a grouped price prints with. */
const PRICE_PLACES = 8;
const decimalForm = /^\d+(\.\d+)?$/;

/**
 * The offered step a request's `group` names, in the offered spelling ("0.050" is "0.05"), or
 * undefined when it is no positive decimal multiple of upstream's price precision, or not offered.
 */
export function offeredGroup(value: unknown): BookGroup | undefined {
  if (typeof value !== 'string' || !decimalForm.test(value)) return undefined;
  const step = new Big(value);
  return bookGroups.find((offered) => step.eq(offered));
}

/**
 * The book with its levels summed into multiples of `step` (a positive decimal string): each bid
 * at its price rounded down to a multiple of the step, each ask rounded up, sizes summed exactly
 * (printed with as many decimal places as the most precise size in the sum), prices printed with 8
 * decimal places as upstream's. `last_price` is kept as it is. Sides stay best first: rounding keeps
 * the order, so the levels of one group are neighbours.
 */
export function groupBook(state: BookState, step: string): BookState {
  const grouped: BookState = {
    bids: groupSide(state.bids, rounding(step, 'down')),
    asks: groupSide(state.asks, rounding(step, 'up')),
  };
  if (state.last_price !== undefined) grouped.last_price = state.last_price;
  return grouped;
}

function groupSide(levels: readonly Level[], round: (price: string) => string): Level[] {
  const grouped: Level[] = [];
  let price: string | undefined;
  let sizes: string[] = [];
  for (const [levelPrice, size] of levels) {
    const rounded = round(levelPrice);
    if (rounded !== price) {
      if (price !== undefined) grouped.push([price, sumDecimals(sizes)]);
      price = rounded;
      sizes = [];
    }
    sizes.push(size);
  }
  if (price !== undefined) grouped.push([price, sumDecimals(sizes)]);
  return grouped;
}

/**
 * Upstream's form of a price (8 decimal places, a whole part short enough): its count of
 * 0.00000001 is an integer below 2^53, so plain numbers round it exactly, several times faster
 * than big.js on every level of every poll. Any other text takes big.js.
 */
const UPSTREAM_PRICE = /^\d{1,7}\.\d{8}$/;
const UNITS_PER_ONE = 10 ** PRICE_PLACES;

/** A price's text rounded `direction` to a multiple of `step`, printed with 8 decimal places. */
function rounding(step: string, direction: 'down' | 'up'): (price: string) => string {
  const unit = new Big(step);
  const scaled = unit.times(UNITS_PER_ONE);
  const stepUnits = scaled.eq(scaled.round()) ? scaled.toNumber() : undefined;
  return (price) => {
    if (stepUnits === undefined || !UPSTREAM_PRICE.test(price)) {
      const exact =
        direction === 'down' ? floorToStep(new Big(price), unit) : ceilToStep(new Big(price), unit);
      return exact.toFixed(PRICE_PLACES);
    }
    const units = Number(price.replace('.', ''));
    const remainder = units % stepUnits;
    const rounded =
      remainder === 0 || direction === 'down' ? units - remainder : units - remainder + stepUnits;
    const fraction = rounded % UNITS_PER_ONE;
    return `${(rounded - fraction) / UNITS_PER_ONE}.${String(fraction).padStart(PRICE_PLACES, '0')}`;
  };
}

/** The largest multiple of `step` at or below `price` (exact: big.js `mod`, no division). */
function floorToStep(price: Big, step: Big): Big {
  let remainder = price.mod(step);
  // big.js gives the remainder the dividend's sign; a negative price rounds down too.
  if (remainder.lt(0)) remainder = remainder.plus(step);
  return price.minus(remainder);
}

/** The smallest multiple of `step` at or above `price`. */
function ceilToStep(price: Big, step: Big): Big {
  const floor = floorToStep(price, step);
  return floor.eq(price) ? floor : floor.plus(step);
}
