/**
 * @module protocol/orders
 * The `orders` channel's state as both ends hold it and how an update is applied to it
 * (docs/protocol.md "`orders` data"). Used by the relay and by the client SDK, so both apply with
 * the same code; no Node imports. States are treated as immutable.
 *
 * The state is keyed by order id: an upsert of a known id replaces that order where it stands, a
 * new id goes to the end of its side. Order positions therefore follow upstream's only in a
 * snapshot; a consumer that needs price priority sorts by price.
 */
import type { OrderEntry, OrderSide, OrdersData, OrdersUpdateData } from './messages.ts';

/** The side names of the update's `side` field, against the state's lists. */
export const ORDER_SIDES: ReadonlyArray<{ side: OrderSide; list: keyof OrdersData }> = [
  { side: 'bid', list: 'bids' },
  { side: 'ask', list: 'asks' },
];

/** Removes first, then upserts in order (an id is never in both lists of the relay's updates). */
export function applyOrdersUpdate(state: OrdersData, update: OrdersUpdateData): OrdersData {
  const removed = new Set(update.removes);
  const upserts = new Map(update.upserts.map((upsert) => [upsert.id, upsert]));
  const placed = new Set<string>();
  const next: OrdersData = { bids: [], asks: [] };
  for (const { side, list } of ORDER_SIDES) {
    for (const order of state[list]) {
      if (removed.has(order.id)) continue;
      const upsert = upserts.get(order.id);
      if (upsert === undefined) next[list].push(order);
      else if (upsert.side === side && !placed.has(order.id)) {
        next[list].push(entryOf(upsert));
        placed.add(order.id);
      }
    }
  }
  for (const upsert of upserts.values()) {
    if (placed.has(upsert.id)) continue;
    next[upsert.side === 'bid' ? 'bids' : 'asks'].push(entryOf(upsert));
    placed.add(upsert.id);
  }
  return next;
}

function entryOf(order: OrderEntry): OrderEntry {
  return { id: order.id, price: order.price, size: order.size, token_id: order.token_id };
}
