/**
 * @module relay/channels/channel-diff
 * What changed between two successive states of the channels after `book` and `price`, as their
 * `update` data (docs/protocol.md, one section per channel); `null` when nothing did, so no update
 * is sent. Each is the inverse of its apply function in protocol/channel-state.ts: applying
 * `diff(prev, next)` to `prev` gives `next` (test/relay/channels/channel-diff.property.test.ts).
 */

import { diffRecord, sameJson } from '../../channels/records.ts';
import type {
  MarketData,
  MarketListRecord,
  MarketsData,
  MarketsUpdateData,
  MarketUpdateData,
  OrderEntry,
  OrderSide,
  OrdersData,
  OrdersUpdateData,
} from '../../protocol/messages.ts';

/** The fields whose value changed (compared as JSON), `null` for a field gone. */
export function diffMarket(prev: MarketData, next: MarketData): MarketUpdateData | null {
  return diffRecord(prev, next, sameJson);
}

/** The catalogue's records new or changed (whole), `null` for a market gone from it. */
export function diffMarkets(prev: MarketsData, next: MarketsData): MarketsUpdateData | null {
  return diffRecord<MarketListRecord>(prev, next, sameJson);
}

/** The markets whose entry changed (the whole new entry), `null` for a market gone from the map. */
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
