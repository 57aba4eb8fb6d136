import { describe, expect, it } from 'vitest';
import type { BookState } from '../../../../packages/protocol/src/protocol/book.ts';
import { diffBook, limitDepth } from '../../../../src/relay/channels/book/codec.ts';

const base: BookState = {
  bids: [
    ['0.50000000', '10'],
    ['0.40000000', '5'],
  ],
  asks: [
    ['0.60000000', '3'],
    ['0.70000000', '4'],
  ],
  last_price: '0.55000000',
};

describe('diffBook', () => {
  it('returns null when nothing changed', () => {
    expect(diffBook(base, structuredClone(base))).toBeNull();
    expect(diffBook(base, base)).toBeNull();
    expect(diffBook({ bids: [], asks: [] }, { bids: [], asks: [] })).toBeNull();
  });

  it('reports added, resized and removed levels best first, per side', () => {
    const next: BookState = {
      bids: [
        ['0.55000000', '1'],
        ['0.50000000', '12.5'],
      ],
      asks: [
        ['0.60000000', '3'],
        ['0.65000000', '2'],
        ['0.70000000', '4'],
        ['0.80000000', '1'],
      ],
      last_price: '0.55000000',
    };
    expect(diffBook(base, next)).toStrictEqual({
      bids: [
        ['0.55000000', '1'],
        ['0.50000000', '12.5'],
        ['0.40000000', '0'],
      ],
      asks: [
        ['0.65000000', '2'],
        ['0.80000000', '1'],
      ],
    });
  });

  it('keeps both keys when only one side changed', () => {
    const next: BookState = { ...base, asks: [['0.70000000', '4']] };
    expect(diffBook(base, next)).toStrictEqual({ bids: [], asks: [['0.60000000', '0']] });
  });

  it('includes last_price only when it changed', () => {
    expect(diffBook(base, { ...base, last_price: '0.56000000' })).toStrictEqual({
      bids: [],
      asks: [],
      last_price: '0.56000000',
    });
    const resized = diffBook(base, { ...base, bids: [['0.50000000', '11'], base.bids[1]!] });
    expect(resized).not.toHaveProperty('last_price');
  });

  it('sends a size whose text changed even when numerically equal', () => {
    const prev: BookState = { bids: [['0.50000000', '3.50']], asks: [] };
    const next: BookState = { bids: [['0.50000000', '3.5']], asks: [] };
    expect(diffBook(prev, next)).toStrictEqual({ bids: [['0.50000000', '3.5']], asks: [] });
  });

  it('removes every level of a side that emptied', () => {
    expect(diffBook(base, { ...base, bids: [] })).toStrictEqual({
      bids: [
        ['0.50000000', '0'],
        ['0.40000000', '0'],
      ],
      asks: [],
    });
  });

  it('includes the levels entering and leaving a depth window', () => {
    const ladder = (prices: number[]): BookState => ({
      bids: prices.map((p): [string, string] => [(p / 100).toFixed(8), '1']),
      asks: [],
    });
    const prev = ladder([20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9]);
    // A new best bid pushes 0.11 out of a 10-level window; 0.09 was never in it.
    const next = ladder([21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9]);
    expect(diffBook(limitDepth(prev, 10), limitDepth(next, 10))).toStrictEqual({
      bids: [
        ['0.21000000', '1'],
        ['0.11000000', '0'],
      ],
      asks: [],
    });
    // The best bid leaves: 0.10 enters the window.
    const after = ladder([19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9]);
    expect(diffBook(limitDepth(prev, 10), limitDepth(after, 10))).toStrictEqual({
      bids: [
        ['0.20000000', '0'],
        ['0.10000000', '1'],
      ],
      asks: [],
    });
  });
});
