/**
 * The client-side cores of two channels beyond what test/relay/channels/market/diff.property.test.ts covers:
 * the SDK's orders kept by id per side (channels/orders), and a market record taking changed
 * fields whatever their names, `__proto__` included (channels/market/wire.ts): whatever the change
 * between two upstream states, the update docs/protocol.md describes for it takes the first state
 * to the second.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyMarketUpdate } from '../../packages/protocol/src/channels/market/wire.ts';
import {
  applyOrderMapUpdate,
  orderListsOf,
  orderMapOf,
} from '../../packages/protocol/src/channels/orders/orders.ts';
import type {
  MarketUpdateData,
  OrderEntry,
  OrderSide,
  OrdersData,
  OrdersUpdateData,
} from '../../packages/protocol/src/protocol/messages.ts';

const orderId = fc.constantFrom(...Array.from({ length: 12 }, (_, i) => `ord_${i}`));
const order = fc.record({
  id: orderId,
  price: fc.stringMatching(/^0\.\d{8}$/),
  size: fc.stringMatching(/^[1-9]\d{0,3}(\.\d{1,2})?$/),
  token_id: fc.integer({ min: 0, max: 3 }),
});
/** Two sides with no id twice (the relay keeps a repeated id once). */
const orders: fc.Arbitrary<OrdersData> = fc
  .uniqueArray(fc.tuple(order, fc.boolean()), { selector: ([entry]) => entry.id, maxLength: 12 })
  .map((entries) => ({
    bids: entries.filter(([, bid]) => bid).map(([entry]) => entry),
    asks: entries.filter(([, bid]) => !bid).map(([entry]) => entry),
  }));

/** The update between two states as the spec has it: every order new or changed, ids gone. */
function ordersUpdate(before: OrdersData, after: OrdersData): OrdersUpdateData {
  const previous = new Map<string, { side: OrderSide; order: OrderEntry }>();
  for (const entry of before.bids) previous.set(entry.id, { side: 'bid', order: entry });
  for (const entry of before.asks) previous.set(entry.id, { side: 'ask', order: entry });
  const sided = [
    ...after.bids.map((entry) => ({ side: 'bid' as const, ...entry })),
    ...after.asks.map((entry) => ({ side: 'ask' as const, ...entry })),
  ];
  const upserts = sided.filter(({ side, ...entry }) => {
    const known = previous.get(entry.id);
    return (
      known === undefined || known.side !== side || JSON.stringify(known.order) !== JSON.stringify(entry)
    );
  });
  const kept = new Set(sided.map((entry) => entry.id));
  return { upserts, removes: [...previous.keys()].filter((id) => !kept.has(id)) };
}

const byId = (list: readonly OrderEntry[]) => [...list].sort((a, b) => a.id.localeCompare(b.id));

describe('order map', () => {
  it('an update takes the state to the next upstream state, order by order and side by side', () => {
    fc.assert(
      fc.property(orders, orders, (before, after) => {
        const state = applyOrderMapUpdate(orderMapOf(before), ordersUpdate(before, after));
        const lists = orderListsOf(state);
        expect(byId(lists.bids)).toEqual(byId(after.bids));
        expect(byId(lists.asks)).toEqual(byId(after.asks));
      }),
    );
  });

  it('an order that stays on its side keeps its position; new ones come after', () => {
    fc.assert(
      fc.property(orders, orders, (before, after) => {
        const { bids } = orderListsOf(applyOrderMapUpdate(orderMapOf(before), ordersUpdate(before, after)));
        const stayed = new Set(after.bids.map((entry) => entry.id));
        const kept = before.bids.filter((entry) => stayed.has(entry.id)).map((entry) => entry.id);
        expect(bids.slice(0, kept.length).map((entry) => entry.id)).toEqual(kept);
      }),
    );
  });

  it('an empty update returns the same state object', () => {
    fc.assert(
      fc.property(orders, (data) => {
        const state = orderMapOf(data);
        expect(applyOrderMapUpdate(state, { upserts: [], removes: [] })).toBe(state);
      }),
    );
  });
});

const jsonValue = fc.oneof(fc.string(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean());
/** Keys include the ones a careless `target[key] = value` would turn into prototype changes. */
const key = fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('__proto__', 'constructor', 'toString'));
const record = fc.dictionary(key, jsonValue, { maxKeys: 10 });

describe('market record changes', () => {
  it('changed values and null for gone fields take a record to the next one, leaving the first untouched', () => {
    fc.assert(
      fc.property(record, record, (before, after) => {
        const changes: MarketUpdateData = Object.fromEntries([
          ...Object.keys(before)
            .filter((name) => !Object.hasOwn(after, name))
            .map((name) => [name, null]),
          ...Object.entries(after).filter(([name, value]) => !Object.is(before[name], value)),
        ]);
        const copy = structuredClone(before);
        const next = applyMarketUpdate(before, changes);
        expect(next).toEqual(after);
        expect(Object.getPrototypeOf(next)).toBe(Object.prototype);
        expect(before).toEqual(copy);
      }),
    );
  });
});
