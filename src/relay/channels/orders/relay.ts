/**
 * @module relay/channels/orders/relay
 * The `orders` channel's server part: its diff, and its state of upstream's book. Its streams are
 * served by their market's book target (relay/channels/book/target/book-target.ts), from the same polls as the
 * `book` streams, whose levels are made from the same orders (../book/levels.ts).
 */
import type {
  OrderEntry,
  OrderSide,
  OrdersData,
  OrdersUpdateData,
} from '../../../../packages/protocol/src/channels/orders/orders.ts';
import type { OrderBook } from '../../../upstream/contract/schemas.ts';
import type { RelayChannel } from '../relay-definition.ts';

/** Orders new or changed (whole, with their side) and ids gone, compared by id. */
export function diffOrders(prev: OrdersData, next: OrdersData): OrdersUpdateData | null {
  const before = ordersById(prev);
  const after = ordersById(next);
  const upserts: OrdersUpdateData['upserts'] = [];
  for (const [id, order] of after) {
    const old = before.get(id);
    if (old === undefined || !sameOrder(old, order)) upserts.push(order);
  }
  const removes = [...before.keys()].filter((id) => !after.has(id));
  return upserts.length === 0 && removes.length === 0 ? null : { upserts, removes };
}

type SidedOrder = OrderEntry & { side: OrderSide };

/** An id upstream lists twice is taken once, as its first entry. */
function ordersById(orders: OrdersData): Map<string, SidedOrder> {
  const byId = new Map<string, SidedOrder>();
  for (const order of orders.bids) if (!byId.has(order.id)) byId.set(order.id, { ...order, side: 'bid' });
  for (const order of orders.asks) if (!byId.has(order.id)) byId.set(order.id, { ...order, side: 'ask' });
  return byId;
}

function sameOrder(a: SidedOrder, b: SidedOrder): boolean {
  return a.side === b.side && a.price === b.price && a.size === b.size && a.token_id === b.token_id;
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
