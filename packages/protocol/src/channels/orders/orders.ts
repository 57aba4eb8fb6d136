/**
 * @module channels/orders/orders
 * The `orders` channel's Node-free part (docs/protocol.md "`orders`"): a market's book order by
 * order, each upstream entry unchanged. Snapshot: every order of the book, each side in upstream's
 * order; update: the orders new or changed (whole, with their side) and the ids of orders gone. A
 * client keeps the orders by id ({@link OrderMapState}), each side in the order the stream
 * delivered them; states are treated as immutable: functions return new objects and may share an
 * unchanged side with their input.
 */
import { type FieldTypes, hasFields, isListOf, isStringArray } from '../../util/field-checks.ts';
import type { ChannelDefinition } from '../definition.ts';
import { MARKET_IDS } from '../definition.ts';

/** One upstream order entry, unchanged. */
export interface OrderEntry {
  id: string;
  price: string;
  size: string;
  token_id: number;
}
export type OrderSide = 'bid' | 'ask';
/** Snapshot: every order of the book, each side in upstream's order. */
export interface OrdersData {
  bids: OrderEntry[];
  asks: OrderEntry[];
}
/** Update: orders new or changed (the whole order and its side), and ids of orders gone. */
export interface OrdersUpdateData {
  upserts: Array<OrderEntry & { side: OrderSide }>;
  removes: string[];
}

export interface OrderMapState {
  bids: ReadonlyMap<string, OrderEntry>;
  asks: ReadonlyMap<string, OrderEntry>;
}

/** A snapshot's orders keyed by id; an id upstream repeats keeps its first entry, bids before asks. */
export function orderMapOf(data: OrdersData): OrderMapState {
  const bids = new Map<string, OrderEntry>();
  const asks = new Map<string, OrderEntry>();
  for (const order of data.bids) if (!bids.has(order.id)) bids.set(order.id, order);
  for (const order of data.asks) if (!bids.has(order.id) && !asks.has(order.id)) asks.set(order.id, order);
  return { bids, asks };
}

/**
 * Removes first, then upserts in order: a known id on the same side is replaced in place (a Map
 * keeps a key's position on `set`), a known id on the other side moves there (appended), a new id
 * is appended to its side.
 */
export function applyOrderMapUpdate(state: OrderMapState, update: OrdersUpdateData): OrderMapState {
  if (update.removes.length === 0 && update.upserts.length === 0) return state;
  const bids = new Map(state.bids);
  const asks = new Map(state.asks);
  for (const id of update.removes) {
    bids.delete(id);
    asks.delete(id);
  }
  for (const { side, ...order } of update.upserts) {
    (side === 'bid' ? asks : bids).delete(order.id);
    (side === 'bid' ? bids : asks).set(order.id, order);
  }
  return { bids, asks };
}

/** Back to the wire's shape: each side's orders as a list, in the state's order. */
export function orderListsOf(state: OrderMapState): OrdersData {
  return { bids: [...state.bids.values()], asks: [...state.asks.values()] };
}

/** An update applied to the wire's shape, through the orders by id. */
export function applyOrdersUpdate(state: OrdersData, update: OrdersUpdateData): OrdersData {
  return orderListsOf(applyOrderMapUpdate(orderMapOf(state), update));
}

const orderFields: FieldTypes = { id: 'string', price: 'string', size: 'string', token_id: 'number' };
const sidedOrderFields: FieldTypes = { ...orderFields, side: 'string' };

export const orders: ChannelDefinition<OrdersData, OrdersUpdateData> = {
  streamIds: { kind: MARKET_IDS },
  apply: applyOrdersUpdate,
  dataProblem: ({ data }, snapshot) => {
    if (snapshot)
      return isListOf(data.bids, orderFields) && isListOf(data.asks, orderFields) ? undefined : 'orders';
    const sided = (order: unknown) =>
      hasFields(order, sidedOrderFields) && (order.side === 'bid' || order.side === 'ask');
    return Array.isArray(data.upserts) && data.upserts.every(sided) && isStringArray(data.removes)
      ? undefined
      : 'order changes';
  },
};
