/**
 * @module relay/channels/channel-diff
 * What changed between two successive states of the channels after `book` and `price`, as their
 * `update` data (docs/protocol.md, one section per channel); `null` when nothing did, so no update
 * is sent. Each is the inverse of its apply function in protocol/channel-state.ts: applying
 * `diff(prev, next)` to `prev` gives `next` (test/relay/channels/channel-diff.property.test.ts).
 */
import type {
  JsonValue,
  MarketData,
  MarketListRecord,
  MarketsData,
  MarketsUpdateData,
  MarketUpdateData,
  OrderEntry,
  OrderSide,
  OrdersData,
  OrdersUpdateData,
  ProbabilitiesData,
  ProbabilitiesUpdateData,
  ProbabilityEntry,
  TradesData,
} from '../../protocol/messages.ts';

/** The entries of `next` that `prev` does not hold, in `next`'s order (oldest first). */
export function diffTrades(prev: TradesData, next: TradesData): TradesData | null {
  const known = new Set(prev.trades.map((trade) => trade.activity_id));
  const trades = next.trades.filter((trade) => !known.has(trade.activity_id));
  return trades.length === 0 ? null : { trades };
}

/** The fields whose value changed (compared as JSON), `null` for a field gone. */
export function diffMarket(prev: MarketData, next: MarketData): MarketUpdateData | null {
  return diffRecord(prev, next, sameJson);
}

/** The catalogue's records new or changed (whole), `null` for a market gone from it. */
export function diffMarkets(prev: MarketsData, next: MarketsData): MarketsUpdateData | null {
  return diffRecord<MarketListRecord>(prev, next, sameJson);
}

/** The markets whose entry changed (the whole new entry), `null` for a market gone from the map. */
export function diffProbabilities(
  prev: ProbabilitiesData,
  next: ProbabilitiesData,
): ProbabilitiesUpdateData | null {
  return diffRecord(prev, next, sameProbability);
}

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

/** Fields an entry has beyond the named ones are upstream's too, and compared as JSON. */
function sameProbability(a: ProbabilityEntry, b: ProbabilityEntry): boolean {
  return (
    a.midpoint === b.midpoint &&
    a.best_bid === b.best_bid &&
    a.best_ask === b.best_ask &&
    a.last_trade_price === b.last_trade_price &&
    a.timestamp === b.timestamp &&
    ((fieldCount(a) === PROBABILITY_FIELDS && fieldCount(b) === PROBABILITY_FIELDS) ||
      sameJson(a as unknown as JsonValue, b as unknown as JsonValue))
  );
}

const PROBABILITY_FIELDS = 5;

function fieldCount(record: object): number {
  let count = 0;
  for (const key in record) if (Object.hasOwn(record, key)) count += 1;
  return count;
}

function sameJson(a: JsonValue, b: JsonValue): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((value, i) => sameJson(value, b[i]!));
  }
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((key) => key in b && sameJson(a[key]!, b[key]!));
}

/** Built through entries, so that a key such as `__proto__` (upstream's JSON) stays a key. */
function diffRecord<V>(
  prev: Readonly<Record<string, V>>,
  next: Readonly<Record<string, V>>,
  same: (a: V, b: V) => boolean,
): Record<string, V | null> | null {
  const changes: [string, V | null][] = [];
  for (const [key, value] of Object.entries(next)) {
    const old = Object.hasOwn(prev, key) ? prev[key] : undefined;
    if (old === undefined || !same(old, value)) changes.push([key, value]);
  }
  for (const key of Object.keys(prev)) if (!Object.hasOwn(next, key)) changes.push([key, null]);
  return changes.length === 0 ? null : Object.fromEntries(changes);
}
