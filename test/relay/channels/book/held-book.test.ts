import { describe, expect, it } from 'vitest';
import { HeldBook } from '../../../../src/relay/channels/book/book-target.ts';
import { aggregateBook } from '../../../../src/relay/channels/book/levels.ts';
import type { OrderBook } from '../../../../src/upstream/schemas.ts';

const polled: OrderBook = {
  market_id: '3f0c5a4e-8b7d-4c1a-9e2f-1a2b3c4d5e6f',
  bids: [
    { id: 'b1', price: '0.50000000', size: '1.5', token_id: 1 },
    { id: 'b2', price: '0.50000000', size: '2', token_id: 1 },
    { id: 'b3', price: '0.40000000', size: '3', token_id: 1 },
  ],
  asks: [{ id: 'a1', price: '0.60000000', size: '4', token_id: 1 }],
  last_price: '0.55000000',
  timestamp: '2025-01-01T00:00:00.000Z',
};
// Upstream's own layout: the reader reads it straight to levels.
const body = Buffer.from(JSON.stringify(polled));

describe('HeldBook', () => {
  it('tells a book applied again from a new one, by identity', () => {
    const held = new HeldBook();
    expect(held.apply(polled)).toBe(false);
    expect(held.apply(polled)).toBe(true);
    expect(held.apply({ ...polled })).toBe(false);
  });

  it('aggregates a book applied once per depth asked, deeper only when asked deeper', () => {
    const held = new HeldBook();
    held.apply(polled);
    const shallow = held.aggregated(polled, 1);
    expect(shallow).toStrictEqual(aggregateBook(polled, 1));
    expect(held.aggregated(polled, 1)).toBe(shallow);
    const full = held.aggregated(polled, null);
    expect(full).toStrictEqual(aggregateBook(polled, null));
    expect(held.aggregated(polled, 1)).toBe(full);
  });

  it('reads a body to the levels of the book it holds, its entries never parsed', () => {
    const held = new HeldBook();
    const standIn = held.read(body, null);
    expect(standIn).toMatchObject({ bids: [], asks: [], market_id: polled.market_id });
    held.memo.remember(body, standIn!);
    expect(held.apply(standIn!)).toBe(false);
    expect(held.aggregated(standIn!, null)).toStrictEqual(aggregateBook(polled, null));
    // Whole when a channel served from the book asks for it: the body parsed again.
    expect(held.whole(standIn!)).toStrictEqual(polled);
  });

  it('keeps a stand-in in the memo once a parsed book is applied, and still answers it whole', () => {
    const held = new HeldBook();
    held.memo.remember(body, polled);
    held.apply(polled);
    const levels = held.aggregated(polled, null);
    held.keepLess(polled);
    const kept = held.memo.recall(body)!;
    expect(kept).not.toBe(polled);
    expect(kept).toMatchObject({ bids: [], asks: [] });
    // The next poll of the same bytes resolves to the stand-in: the same book, its levels kept.
    expect(held.apply(kept)).toBe(true);
    expect(held.aggregated(kept, null)).toBe(levels);
    expect(held.whole(kept)).toStrictEqual(polled);
  });
});
