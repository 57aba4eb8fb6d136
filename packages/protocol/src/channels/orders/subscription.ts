/**
 * @module channels/orders/subscription
 * How the SDK holds an `orders` stream (its `OrdersSubscription`): each side's orders by id, as
 * upstream's whole entries (./orders.ts {@link OrderMapState}).
 */
import type { HeldStream } from '../definition.ts';
import {
  applyOrderMapUpdate,
  type OrderMapState,
  type OrdersData,
  type OrdersUpdateData,
  orderMapOf,
} from './orders.ts';

/** The events an `orders` subscription adds to every stream's: none. */
export type OrderEvents = Record<never, never>;

const heldOrders: HeldStream<OrdersData, OrdersUpdateData, OrderMapState, OrderEvents> = {
  stateOf: orderMapOf,
  apply: applyOrderMapUpdate,
};

/** A new subscription's hold of its stream (it remembers nothing beyond its state). */
export function holdOrders(): HeldStream<OrdersData, OrdersUpdateData, OrderMapState, OrderEvents> {
  return heldOrders;
}
