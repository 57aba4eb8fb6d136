import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { OrderEntry, OrderSide, OrdersData } from '../../../packages/protocol/src/protocol/messages.ts';
import { diffOrders, ordersStateOf } from '../../../src/relay/channels/orders/relay.ts';
import type { OrderBook } from '../../../src/upstream/schemas.ts';
import { applyOrdersUpdate } from '../../support/channels/orders-state.ts';

// Successive upstream books drawn from a small pool of ids, prices and sizes, so that orders
// persist, resize, reprice, change side, vanish and come back between polls.
const order = fc.record({
  id: fc.constantFrom(...Array.from({ length: 30 }, (_, n) => `o${n}`)),
  price: fc.constantFrom('0.10000000', '0.25000000', '0.50000000', '0.75000000'),
  size: fc.constantFrom('1', '1.5', '1.50', '20', '0.000001'),
  token_id: fc.constantFrom(1, 2),
});
const upstreamBook = fc
  .record({ bids: fc.array(order, { maxLength: 25 }), asks: fc.array(order, { maxLength: 25 }) })
  .map(
    ({ bids, asks }): OrderBook => ({
      market_id: '3f0c5a4e-8b7d-4c1a-9e2f-1a2b3c4d5e6f',
      bids,
      asks,
      last_price: '0.50000000',
      timestamp: '2026-01-01T00:00:00.000Z',
    }),
  );
const state = upstreamBook.map(ordersStateOf);

/** A state as a map id -> side and order: what the protocol says a client must end up with. */
function keyed(orders: OrdersData): Map<string, { side: OrderSide; order: OrderEntry }> {
  const map = new Map<string, { side: OrderSide; order: OrderEntry }>();
  for (const order of orders.bids) map.set(order.id, { side: 'bid', order });
  for (const order of orders.asks) map.set(order.id, { side: 'ask', order });
  return map;
}

const applyDiff = (a: OrdersData, b: OrdersData): OrdersData => {
  const update = diffOrders(a, b);
  return update === null ? a : applyOrdersUpdate(a, update);
};

describe('orders diff and apply', () => {
  it('apply(a, diff(a, b)) equals b keyed by id, side included', () => {
    fc.assert(
      fc.property(state, state, (a, b) => {
        expect(keyed(applyDiff(a, b))).toEqual(keyed(b));
      }),
    );
  });

  it('per side: orders kept on their side stay in place, new ones follow in upstream order', () => {
    fc.assert(
      fc.property(state, state, (a, b) => {
        const result = applyDiff(a, b);
        for (const list of ['bids', 'asks'] as const) {
          const before = new Set(a[list].map((o) => o.id));
          const after = new Set(b[list].map((o) => o.id));
          const expected = [
            ...a[list].filter((o) => after.has(o.id)).map((o) => o.id),
            ...b[list].filter((o) => !before.has(o.id)).map((o) => o.id),
          ];
          expect(result[list].map((o) => o.id)).toEqual(expected);
        }
      }),
    );
  });

  it('no change gives no update; an update never upserts and removes one id, and changes something', () => {
    fc.assert(
      fc.property(state, state, (a, b) => {
        expect(diffOrders(a, a)).toBeNull();
        const update = diffOrders(a, b);
        if (update === null) {
          expect(keyed(a)).toEqual(keyed(b));
          return;
        }
        const removed = new Set(update.removes);
        expect(update.upserts.some((upsert) => removed.has(upsert.id))).toBe(false);
        expect(update.upserts.length + update.removes.length).toBeGreaterThan(0);
        for (const upsert of update.upserts)
          expect(keyed(a).get(upsert.id)).not.toEqual(keyed(b).get(upsert.id));
      }),
    );
  });

  it('a snapshot followed by every update rebuilds the last state by id', () => {
    fc.assert(
      fc.property(fc.array(state, { minLength: 1, maxLength: 12 }), (states) => {
        let client = states[0]!;
        for (let i = 1; i < states.length; i++) {
          const update = diffOrders(states[i - 1]!, states[i]!);
          if (update !== null) client = applyOrdersUpdate(client, update);
        }
        expect(keyed(client)).toEqual(keyed(states[states.length - 1]!));
      }),
    );
  });

  it('keeps an order as its four fields, without one upstream adds', () => {
    const order = { id: 'o1', price: '0.10000000', size: '1', token_id: 1, venue: 'x' };
    const book = { market_id: 'm', bids: [order], asks: [], last_price: '0.10000000', timestamp: 'T' };
    expect(ordersStateOf(book).bids).toEqual([{ id: 'o1', price: '0.10000000', size: '1', token_id: 1 }]);
  });

  it('keeps an id upstream lists twice once: its first listing, bids before asks', () => {
    fc.assert(
      fc.property(upstreamBook, (book) => {
        const orders = ordersStateOf(book);
        const ids = [...orders.bids, ...orders.asks].map((o) => o.id);
        expect(new Set(ids).size).toBe(ids.length);
        const first = new Map<string, OrderEntry>();
        for (const o of [...book.bids, ...book.asks]) if (!first.has(o.id)) first.set(o.id, o);
        for (const o of [...orders.bids, ...orders.asks]) expect(o).toEqual(first.get(o.id));
      }),
    );
  });
});
