/**
 * @module test/client/channels/channel-upstream
 * What each channel after `book` and `price` should hold for the simulator (upstream) as it is now,
 * read over upstream's own HTTP API as any upstream client would, and waits for the SDK's
 * subscriptions to hold exactly that (docs/protocol.md, one section per channel).
 */
import { isDeepStrictEqual } from 'node:util';
import type {
  MarketSubscription,
  OracleSubscription,
  OrdersSubscription,
  ProbabilitiesSubscription,
  TradesSubscription,
} from '../../../packages/client/src/node.ts';
import type { OrderMapState } from '../../../packages/protocol/src/channels/orders/orders.ts';
import { TRADES_SNAPSHOT_SIZE } from '../../../packages/protocol/src/channels/trades/trades.ts';
import type {
  MarketData,
  OracleData,
  OrderEntry,
  ProbabilitiesData,
  TradeEntry,
} from '../../../packages/protocol/src/protocol/messages.ts';
import type { SimulatorHandle } from '../../../src/sim/server.ts';
import { waitFor } from '../../support/wait-for.ts';

async function upstream<T>(sim: SimulatorHandle, path: string): Promise<T> {
  const response = await fetch(`${sim.url}${path}`);
  if (!response.ok) throw new Error(`upstream ${path}: HTTP ${response.status}`);
  return (await response.json()) as T;
}

/** The most recent trades, oldest first, as a `trades` stream's state should show them. */
export async function upstreamTrades(sim: SimulatorHandle, market: string): Promise<TradeEntry[]> {
  const body = await upstream<{ activity: TradeEntry[] }>(
    sim,
    `/api/markets/${market}/activity?limit=${TRADES_SNAPSHOT_SIZE}`,
  );
  return body.activity.reverse();
}

export async function upstreamMarket(sim: SimulatorHandle, market: string): Promise<MarketData> {
  return (await upstream<{ market: MarketData }>(sim, `/api/markets/${market}`)).market;
}

export async function upstreamProbabilities(sim: SimulatorHandle): Promise<ProbabilitiesData> {
  return (await upstream<{ probabilities: ProbabilitiesData }>(sim, '/api/markets/probabilities'))
    .probabilities;
}

export async function upstreamOracle(sim: SimulatorHandle, feedId: string): Promise<OracleData> {
  const { feed_id, price, raw_price, expo, publish_time } = await upstream<OracleData>(
    sim,
    `/api/tokens/price/${feedId}`,
  );
  return { feed_id, price, raw_price, expo, publish_time };
}

/** The book's orders by id per side; an id upstream repeats counts once (the first, bids first). */
export async function upstreamOrders(sim: SimulatorHandle, market: string): Promise<OrderMapState> {
  const book = await upstream<{ bids: OrderEntry[]; asks: OrderEntry[] }>(
    sim,
    `/clob/orderbook?market_id=${market}`,
  );
  const bids = new Map<string, OrderEntry>();
  const asks = new Map<string, OrderEntry>();
  for (const { id, price, size, token_id } of book.bids)
    if (!bids.has(id)) bids.set(id, { id, price, size, token_id });
  for (const { id, price, size, token_id } of book.asks)
    if (!bids.has(id) && !asks.has(id)) asks.set(id, { id, price, size, token_id });
  return { bids, asks };
}

/** The state of each of a client's new-channel subscriptions, read for comparison. */
export interface ChannelSubscriptions {
  trades: TradesSubscription;
  market: MarketSubscription;
  probabilities: ProbabilitiesSubscription;
  oracle: OracleSubscription;
  orders: OrdersSubscription;
}

/** Maps compare by entries whatever their order: an order's position is not part of the contract. */
const sameOrders = (a: OrderMapState | undefined, b: OrderMapState): boolean =>
  a !== undefined &&
  [
    [a.bids, b.bids],
    [a.asks, b.asks],
  ].every(
    ([x, y]) => x!.size === y!.size && [...y!].every(([id, order]) => isDeepStrictEqual(x!.get(id), order)),
  );

/**
 * Reads upstream now (the simulator only moves on a tick, so this is "the same moment"), then waits
 * until every subscription shows exactly that.
 */
export async function expectChannelsEqualUpstream(
  sim: SimulatorHandle,
  streams: ChannelSubscriptions,
): Promise<void> {
  const market = streams.market.market;
  const [trades, record, probabilities, oracle, orders] = await Promise.all([
    upstreamTrades(sim, market),
    upstreamMarket(sim, market),
    upstreamProbabilities(sim),
    upstreamOracle(sim, streams.oracle.market),
    upstreamOrders(sim, market),
  ]);
  const checks: Array<[string, () => boolean]> = [
    ['trades', () => isDeepStrictEqual(streams.trades.state, trades)],
    ['market', () => isDeepStrictEqual(streams.market.state, record)],
    ['probabilities', () => isDeepStrictEqual(streams.probabilities.state, probabilities)],
    ['oracle', () => isDeepStrictEqual(streams.oracle.state, oracle)],
    ['orders', () => sameOrders(streams.orders.state, orders)],
  ];
  for (const [channel, equal] of checks) {
    await waitFor(`the ${channel} stream to equal upstream`, () => equal() || undefined);
  }
}
