/**
 * @module relay/channels/orders/relay
 * The `orders` channel's server part: its diff, and its state of upstream's book. Its streams are
 * served by their market's book target (relay/channels/book/book-target.ts), from the same polls as the
 * `book` streams, whose levels are made from the same orders (../book/levels.ts).
 */
import type {
  OrderEntry,
  OrderSide,
  OrdersData,
  OrdersUpdateData,
} from '../../../../packages/protocol/src/channels/orders/orders.ts';
import type { OrderBook } from '../../../upstream/schemas.ts';
import type { RelayChannel } from '../relay-definition.ts';

/**
 * Orders new or changed (whole, with their side) and ids gone, compared by id. Only the orders that
 * go out are copied with their side: a book's hundreds of orders were copied on every diff, a few
 * per cent of what the relay allocated in the long soak (issue 51).
 */
export function diffOrders(prev: OrdersData, next: OrdersData): OrdersUpdateData | null {
  const before = ordersBySide(prev);
  const after = ordersBySide(next);
  const upserts: OrdersUpdateData['upserts'] = [];
  // By value (each keyed by its id), not by entry: an entry is one more array for every order.
  for (const order of after.bid.values())
    if (!sameOrder(before.bid.get(order.id), order)) upserts.push({ ...order, side: 'bid' });
  for (const order of after.ask.values())
    if (!sameOrder(before.ask.get(order.id), order)) upserts.push({ ...order, side: 'ask' });
  const removes: string[] = [];
  for (const side of [before.bid, before.ask])
    for (const id of side.keys()) if (!after.bid.has(id) && !after.ask.has(id)) removes.push(id);
  return upserts.length === 0 && removes.length === 0 ? null : { upserts, removes };
}

/** Each side's orders by id; an id upstream lists twice is taken once, as its first entry (bids first). */
function ordersBySide(orders: OrdersData): Record<OrderSide, Map<string, OrderEntry>> {
  const bid = new Map<string, OrderEntry>();
  const ask = new Map<string, OrderEntry>();
  for (const order of orders.bids) if (!bid.has(order.id)) bid.set(order.id, order);
  for (const order of orders.asks) if (!bid.has(order.id) && !ask.has(order.id)) ask.set(order.id, order);
  return { bid, ask };
}

function sameOrder(a: OrderEntry | undefined, b: OrderEntry): boolean {
  return a !== undefined && a.price === b.price && a.size === b.size && a.token_id === b.token_id;
}

/**
 * Upstream's orders, each side in upstream's order. The state is keyed by id, so an id upstream
 * lists twice is kept once, snapshot included: its first listing, bids before asks.
 */
export function ordersStateOf(book: OrderBook): OrdersData {
  const ids = new Set<string>();
  // An order is its four fields (what updates compare): one upstream adds is not passed on.
  const firstListings = (orders: readonly OrderEntry[]): OrderEntry[] =>
    orders
      .filter((order) => !ids.has(order.id) && ids.add(order.id))
      .map(({ id, price, size, token_id }) => ({ id, price, size, token_id }));
  return { bids: firstListings(book.bids), asks: firstListings(book.asks) };
}

export const ordersRelay: RelayChannel<unknown, OrdersData, OrdersUpdateData> = {
  codec: { diff: diffOrders },
  fromBook: { stateOf: ordersStateOf },
};
