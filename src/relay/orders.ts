/**
 * @module relay/orders
 * The `orders` channel's relay side (docs/protocol.md "`orders` data"): its state taken from the
 * same upstream book the `book` channel aggregates, and the order-level difference of two states.
 * The client applies it with protocol/orders.ts `applyOrdersUpdate`.
 */
import type { OrderEntry, OrderSide, OrdersData, OrdersUpdateData } from '../protocol/messages.ts';
import { ORDER_SIDES } from '../protocol/orders.ts';
import type { OrderBook } from '../upstream/schemas.ts';

/**
 * Upstream's orders, each side in upstream's order. The state is keyed by id, so an id upstream
 * lists twice is kept once: its first listing, bids before asks.
 */
export function ordersStateOf(book: OrderBook): OrdersData {
  const ids = new Set<string>();
  const firstListings = (orders: readonly OrderEntry[]): OrderEntry[] =>
    orders.filter((order) => !ids.has(order.id) && ids.add(order.id));
  return { bids: firstListings(book.bids), asks: firstListings(book.asks) };
}

/**
 * The orders of `next` that are new or differ from `prev` (any field, or their side) as upserts,
 * each side in `next`'s order, and the ids `next` no longer has; null when nothing changed.
 */
export function diffOrders(prev: OrdersData, next: OrdersData): OrdersUpdateData | null {
  const before = new Map<string, { side: OrderSide; order: OrderEntry }>();
  for (const { side, list } of ORDER_SIDES)
    for (const order of prev[list]) before.set(order.id, { side, order });
  const upserts: OrdersUpdateData['upserts'] = [];
  const kept = new Set<string>();
  for (const { side, list } of ORDER_SIDES) {
    for (const order of next[list]) {
      kept.add(order.id);
      const known = before.get(order.id);
      if (known === undefined || known.side !== side || !sameOrder(known.order, order))
        upserts.push({ side, ...order });
    }
  }
  const removes = [...before.keys()].filter((id) => !kept.has(id));
  return upserts.length === 0 && removes.length === 0 ? null : { upserts, removes };
}

/** Text compared as-is: the client must end up with upstream's exact strings. */
function sameOrder(a: OrderEntry, b: OrderEntry): boolean {
  return a.price === b.price && a.size === b.size && a.token_id === b.token_id;
}
