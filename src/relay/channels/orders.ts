/**
 * @module relay/channels/orders
 * The `orders` channel's state (docs/protocol.md "`orders` data"), taken from the same upstream
 * book the `book` channel aggregates: one order-book request serves both channels.
 */
import type { OrderEntry, OrdersData } from '../../protocol/messages.ts';
import type { OrderBook } from '../../upstream/schemas.ts';

/**
 * Upstream's orders, each side in upstream's order. The state is keyed by id, so an id upstream
 * lists twice is kept once, snapshot included: its first listing, bids before asks.
 */
export function ordersStateOf(book: OrderBook): OrdersData {
  const ids = new Set<string>();
  const firstListings = (orders: readonly OrderEntry[]): OrderEntry[] =>
    orders.filter((order) => !ids.has(order.id) && ids.add(order.id));
  return { bids: firstListings(book.bids), asks: firstListings(book.asks) };
}
