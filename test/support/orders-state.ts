/**
 * The `orders` state in the wire's list shape, for tests that compare lists: the SDK's by-id state
 * (src/protocol/order-map.ts) applies the update, so the apply rule is written once.
 */
import type { OrdersData, OrdersUpdateData } from '../../src/protocol/messages.ts';
import { applyOrderMapUpdate, orderListsOf, orderMapOf } from '../../src/protocol/order-map.ts';

export function applyOrdersUpdate(state: OrdersData, update: OrdersUpdateData): OrdersData {
  return orderListsOf(applyOrderMapUpdate(orderMapOf(state), update));
}
