/**
 * The `orders` state in the wire's list shape, for tests that compare lists: the SDK's by-id state
 * (channels/orders/orders.ts) applies the update, so the apply rule is written once.
 */

import {
  applyOrderMapUpdate,
  orderListsOf,
  orderMapOf,
} from '../../../packages/protocol/src/channels/orders/orders.ts';
import type { OrdersData, OrdersUpdateData } from '../../../packages/protocol/src/protocol/messages.ts';

export function applyOrdersUpdate(state: OrdersData, update: OrdersUpdateData): OrdersData {
  return orderListsOf(applyOrderMapUpdate(orderMapOf(state), update));
}
