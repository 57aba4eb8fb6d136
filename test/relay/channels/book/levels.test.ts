import { describe, expect, it } from 'vitest';
import type { BookState } from '../../../../packages/protocol/src/protocol/book.ts';
import { limitDepth } from '../../../../src/relay/channels/book/codec.ts';
import { aggregateBook } from '../../../../src/relay/channels/book/levels.ts';
import type { OrderBook, OrderEntry } from '../../../../src/upstream/schemas.ts';

let nextId = 0;
const order = (price: string, size: string): OrderEntry => ({ id: `o${nextId++}`, price, size, token_id: 1 });
const book = (bids: OrderEntry[], asks: OrderEntry[]): OrderBook => ({
  market_id: '3f0c5a4e-8b7d-4c1a-9e2f-1a2b3c4d5e6f',
  bids,
  asks,
  last_price: '0.55000000',
  timestamp: '2025-01-01T00:00:00.000Z',
});

describe('aggregateBook', () => {
  it('sums several orders per level exactly, with mixed precision', () => {
    const state = aggregateBook(
      book(
        [
          order('0.50000000', '1.5'),
          order('0.50000000', '2.25'),
          order('0.50000000', '3'),
          order('0.40000000', '0.1'),
          order('0.40000000', '0.2'),
        ],
        [order('0.60000000', '1.50'), order('0.60000000', '2')],
      ),
    );
    expect(state).toStrictEqual({
      bids: [
        ['0.50000000', '6.75'],
        ['0.40000000', '0.3'],
      ],
      asks: [['0.60000000', '3.50']],
      last_price: '0.55000000',
    });
  });

  it('sorts bids highest first and asks lowest first whatever upstream order', () => {
    const state = aggregateBook(
      book(
        [
          order('0.10000000', '1'),
          order('0.30000000', '3'),
          order('0.20000000', '2'),
          order('0.30000000', '1'),
        ],
        [
          order('0.90000000', '9'),
          order('0.70000000', '7'),
          order('0.80000000', '8'),
          order('0.70000000', '1'),
        ],
      ),
    );
    expect(state.bids).toEqual([
      ['0.30000000', '4'],
      ['0.20000000', '2'],
      ['0.10000000', '1'],
    ]);
    expect(state.asks).toEqual([
      ['0.70000000', '8'],
      ['0.80000000', '8'],
      ['0.90000000', '9'],
    ]);
  });

  it('compares prices numerically across decimals of different magnitude', () => {
    const state = aggregateBook(book([order('9.00000000', '1'), order('10.00000000', '1')], []));
    expect(state.bids.map(([price]) => price)).toEqual(['10.00000000', '9.00000000']);
  });

  it('keeps a single order size text as-is and drops zero-total levels', () => {
    const state = aggregateBook(
      book(
        [order('0.50000000', '2.500'), order('0.40000000', '0'), order('0.30000000', '0.00')],
        [order('0.60000000', '0.000'), order('0.60000000', '0')],
      ),
    );
    expect(state.bids).toEqual([['0.50000000', '2.500']]);
    expect(state.asks).toEqual([]);
  });

  it('merges textually different spellings of one price under the first text seen', () => {
    // upstream's price form (`-?\d+\.\d{8}`) spells one price several ways only by leading zeros
    // and the sign of zero
    const state = aggregateBook(
      book(
        [
          order('00.40000000', '1'),
          order('0.50000000', '1'),
          order('0.40000000', '2'),
          order('000.50000000', '0.5'),
          order('-0.00000000', '1'),
          order('0.00000000', '2'),
        ],
        [],
      ),
    );
    expect(state.bids).toEqual([
      ['0.50000000', '1.5'],
      ['00.40000000', '3'],
      ['-0.00000000', '3'],
    ]);
  });

  it('handles empty sides', () => {
    expect(aggregateBook(book([], []))).toStrictEqual({ bids: [], asks: [], last_price: '0.55000000' });
    expect(aggregateBook(book([], [order('0.60000000', '1')])).bids).toEqual([]);
  });
});

describe('limitDepth', () => {
  const levels = (count: number, from: number, step: number) =>
    Array.from({ length: count }, (_, i): [string, string] => [((from + i * step) / 100).toFixed(8), '1']);
  const state: BookState = { bids: levels(12, 49, -1), asks: levels(3, 51, 1), last_price: '0.50000000' };

  it('keeps the best `depth` levels per side and last_price', () => {
    const limited = limitDepth(state, 10);
    expect(limited.bids).toEqual(state.bids.slice(0, 10));
    expect(limited.bids[0]![0]).toBe('0.49000000');
    expect(limited.bids[9]![0]).toBe('0.40000000');
    expect(limited.asks).toEqual(state.asks);
    expect(limited.last_price).toBe('0.50000000');
  });

  it('returns the state unchanged for the full book or a book within depth', () => {
    expect(limitDepth(state, null)).toBe(state);
    expect(limitDepth(state, 50)).toBe(state);
  });
});
