import Big from 'big.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { BookState } from '../../packages/protocol/src/protocol/book.ts';
import { bookGroups, groupBook, offeredGroup } from '../../packages/protocol/src/protocol/group.ts';
import type { Level } from '../../packages/protocol/src/protocol/messages.ts';
import { propertyRuns } from '../support/property-runs.ts';

/** A price as upstream prints it, from a count of 0.00000001 (never through a binary float). */
const priceText = (units: number): string =>
  `${Math.floor(units / 1e8)}.${String(units % 1e8).padStart(8, '0')}`;

const size = fc
  .tuple(fc.integer({ min: 0, max: 100_000 }), fc.option(fc.stringMatching(/^\d{1,6}$/), { nil: undefined }))
  .filter(([whole, fraction]) => whole > 0 || (fraction !== undefined && /[1-9]/.test(fraction)))
  .map(([whole, fraction]) => (fraction === undefined ? String(whole) : `${whole}.${fraction}`));

/** One side: distinct prices in (0, 1.5), best first, each with a positive size. */
const side = (best: 'highest' | 'lowest') =>
  fc.uniqueArray(fc.integer({ min: 1, max: 150_000_000 }), { maxLength: 60 }).chain((prices) =>
    fc.tuple(...prices.map(() => size)).map((sizes) => {
      const order = [...prices].sort((a, b) => (best === 'highest' ? b - a : a - b));
      return order.map((units, i): Level => [priceText(units), sizes[i]!]);
    }),
  );

const book = fc.record({ bids: side('highest'), asks: side('lowest') }) as fc.Arbitrary<BookState>;
const step = fc.constantFrom(...bookGroups);

const total = (levels: readonly Level[]): Big => levels.reduce((sum, [, s]) => sum.plus(s), new Big(0));

describe('groupBook', () => {
  it('keeps each side’s total size, puts every price on a multiple of the step, bids down and asks up', () => {
    fc.assert(
      fc.property(book, step, (state, group) => {
        const grouped = groupBook(state, group);
        for (const name of ['bids', 'asks'] as const) {
          expect(total(grouped[name]).eq(total(state[name]))).toBe(true);
          for (const [price] of grouped[name]) expect(new Big(price).mod(group).eq(0)).toBe(true);
          for (const [price] of grouped[name]) expect(price).toMatch(/^\d+\.\d{8}$/);
          // One entry per price, best first.
          const prices = grouped[name].map(([price]) => new Big(price));
          for (let i = 1; i < prices.length; i++)
            expect(name === 'bids' ? prices[i]!.lt(prices[i - 1]!) : prices[i]!.gt(prices[i - 1]!)).toBe(
              true,
            );
        }
        // Every level lands in the group the rounding names, never at a better price than its own.
        for (const [price] of state.bids) {
          const home = grouped.bids.find(([g]) => new Big(g).lte(price) && new Big(g).plus(group).gt(price));
          expect(home).toBeDefined();
        }
        for (const [price] of state.asks) {
          const home = grouped.asks.find(([g]) => new Big(g).gte(price) && new Big(g).minus(group).lt(price));
          expect(home).toBeDefined();
        }
      }),
      { numRuns: propertyRuns(200) },
    );
  });

  it('is idempotent, and grouping by a multiple of a step already applied equals grouping the book at once', () => {
    fc.assert(
      fc.property(book, step, step, (state, a, b) => {
        const once = groupBook(state, a);
        expect(groupBook(once, a)).toEqual(once);
        const [fine, coarse] = new Big(a).lte(b) ? [a, b] : [b, a];
        if (new Big(coarse).mod(fine).eq(0))
          expect(groupBook(groupBook(state, fine), coarse)).toEqual(groupBook(state, coarse));
      }),
      { numRuns: propertyRuns(200) },
    );
  });

  it('rounds any spelling of a price as upstream’s (the exact path for other text, the fast one for 8 places)', () => {
    const respelled = (levels: readonly Level[]): Level[] =>
      levels.map(([price, size]) => [price.replace(/\.?0+$/, ''), size]);
    fc.assert(
      fc.property(book, step, (state, group) => {
        const other = { bids: respelled(state.bids), asks: respelled(state.asks) };
        expect(groupBook(other, group)).toEqual(groupBook(state, group));
      }),
      { numRuns: propertyRuns(100) },
    );
  });

  it('sums a book by hand into 0.05 steps', () => {
    const state: BookState = {
      bids: [
        ['0.54300000', '10'],
        ['0.50000000', '2.5'],
        ['0.49900000', '1.25'],
        ['0.45100000', '4'],
      ],
      asks: [
        ['0.55000000', '3'],
        ['0.55100000', '0.75'],
        ['0.59900000', '1'],
        ['0.60000000', '6'],
      ],
      last_price: '0.54400000',
    };
    expect(groupBook(state, '0.05')).toEqual({
      bids: [
        ['0.50000000', '12.5'],
        ['0.45000000', '5.25'],
      ],
      asks: [
        ['0.55000000', '3'],
        ['0.60000000', '7.75'],
      ],
      last_price: '0.54400000',
    });
  });
});

describe('offeredGroup', () => {
  it('reads an offered step in any spelling and refuses the rest', () => {
    expect(offeredGroup('0.05')).toBe('0.05');
    expect(offeredGroup('0.050')).toBe('0.05');
    expect(offeredGroup('.05')).toBeUndefined();
    expect(offeredGroup('0.03')).toBeUndefined();
    expect(offeredGroup('0')).toBeUndefined();
    expect(offeredGroup('-0.05')).toBeUndefined();
    expect(offeredGroup('0.000000001')).toBeUndefined();
    expect(offeredGroup(0.05)).toBeUndefined();
  });
});
