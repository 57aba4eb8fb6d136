/**
 * @module protocol/order-map
 * The `orders` channel's state as a client keeps it: each side's orders keyed by order id, in the
 * order the stream delivered them, and how an `orders` update is applied to it (docs/protocol.md
 * "`orders`"). Pure and Node-free: the client SDK uses it, and the relay's tests can check a
 * stream's updates against upstream with it.
 *
 * States are treated as immutable: functions return new objects and may share an unchanged side
 * with their input.
 */
import type { OrderEntry, OrdersData, OrdersUpdateData } from './messages.ts';

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
