/**
 * @module channels/registry
 * Every channel, listed once: the protocol's channel list in its order, and the channels defined in
 * a folder of their own (their Node-free part, ./definition.ts). The protocol, the SDK and the
 * status page read a channel through here (the SDK also how it holds its streams); the relay reads
 * its server part through relay/channels/relay-registry.ts. Adding a channel: its folder, a line here and one in
 * relay/channels/relay-registry.ts (and, for the SDK's `subscribe…` method, one in client/channel-streams.ts).
 */

import { isObject } from '../util/field-checks.ts';
import { bookWire } from './book/wire.ts';
import { type CandlesData as CandlesDataOf, candlesChannel } from './candles/candles.ts';
import { type ProbabilityCandle, probabilityCandles } from './candles/sources.ts';
import { candlesStreamReader } from './candles/streams.ts';
import {
  type CandleEvents as CandleEventsOf,
  type CandlesState as CandlesStateOf,
  holdCandles,
} from './candles/subscription.ts';
import {
  type ChannelDefinition,
  type ChannelWire,
  type HeldStream,
  PATHS_FIELD,
  STREAM_IDS_FIELD,
} from './definition.ts';
import { marketWire } from './market/wire.ts';
import { marketsWire } from './markets/wire.ts';
import { type OracleData, oracle } from './oracle/oracle.ts';
import { type OrderMapState, type OrdersData, type OrdersUpdateData, orders } from './orders/orders.ts';
import { holdOrders, type OrderEvents } from './orders/subscription.ts';
import { priceWire } from './price/wire.ts';
import {
  type ProbabilitiesData,
  type ProbabilitiesUpdateData,
  probabilities,
} from './probabilities/probabilities.ts';
import { restWire } from './rest/wire.ts';
import { type TradesCandle, tradesCandles } from './trades/candle-source.ts';
import { holdTrades, type TradeEvents, type TradesState } from './trades/subscription.ts';
import { type TradesData, trades } from './trades/trades.ts';

export type { ProbabilityCandle } from './candles/sources.ts';
export { type CandleInterval, candleIntervals, candlesStreamId } from './candles/streams.ts';
export type { OracleData } from './oracle/oracle.ts';
export type { OrderEntry, OrderSide, OrdersData, OrdersUpdateData } from './orders/orders.ts';
export { type OrderMapState, orderListsOf } from './orders/orders.ts';
export type {
  ProbabilitiesData,
  ProbabilitiesUpdateData,
  ProbabilityEntry,
} from './probabilities/probabilities.ts';
export type { TradesCandle } from './trades/candle-source.ts';
export type { TradesState } from './trades/subscription.ts';
export type { TradeEntry, TradesData } from './trades/trades.ts';

/** The sources of `candles` streams, as the channels that have them offer them; ids name them in this order. */
export const candleSourceDefinitions = [probabilityCandles, tradesCandles] as const;
/** Each candle source, by its name in stream ids. */
export const candleSources = [probabilityCandles.name, tradesCandles.name] as const;
export type CandleSource = (typeof candleSources)[number];
/** A candle of any source. */
export type Candle = ProbabilityCandle | TradesCandle;
export type CandlesData = CandlesDataOf<Candle>;
export type CandlesState = CandlesStateOf<Candle>;
type CandleEvents = CandleEventsOf<Candle>;
/** The market, interval and source of a candles stream id (any case), or undefined for one that is not. */
export const candlesStreamOf = candlesStreamReader(candleSources);
const candles = candlesChannel<Candle>(candleSourceDefinitions);

/** Every channel, in the order docs/protocol.md gives them. */
export const channelNames = [
  'book',
  'price',
  'trades',
  'market',
  'probabilities',
  'oracle',
  'orders',
  'markets',
  'rest',
  'candles',
] as const;

/**
 * Each channel defined in a folder of its own: its `snapshot` and `update` data, and `checksum`
 * when its messages carry one (its definition's `checksum`).
 */
export interface DefinedChannelData {
  trades: { snapshot: TradesData; update: TradesData };
  probabilities: { snapshot: ProbabilitiesData; update: ProbabilitiesUpdateData };
  oracle: { snapshot: OracleData; update: OracleData };
  orders: { snapshot: OrdersData; update: OrdersUpdateData };
  candles: { snapshot: CandlesData; update: CandlesData; checksum: number };
}

export type DefinedChannel = keyof DefinedChannelData;

/** The channels defined in a folder of their own, by name. */
export const channelDefinitions: {
  readonly [C in DefinedChannel]: ChannelDefinition<
    DefinedChannelData[C]['snapshot'],
    DefinedChannelData[C]['update']
  >;
} = { trades, probabilities, oracle, orders, candles };

/**
 * A subscribe's `markets: ["*"]` on these channels: every market upstream's catalogue lists as
 * active, now and later (docs/protocol.md "Wildcard subscriptions"). Channels polled per market at
 * a market's own cost, or not per market at all, take no wildcard.
 */
export const wildcardChannels = ['price', 'trades', 'market'] as const;

/** The upstream GETs the defined channels carry whole (their `upstreamGet`), for the `rest` table. */
export const channelGets: readonly string[] = Object.values(channelDefinitions).flatMap(({ upstreamGet }) =>
  upstreamGet === undefined ? [] : [upstreamGet],
);

export function isDefinedChannel(channel: string): channel is DefinedChannel {
  return Object.hasOwn(channelDefinitions, channel);
}

type ChannelName = (typeof channelNames)[number];

/** A defined channel's wire form, as its definition gives it. */
function wireOf({ streamIds, checksum, dataProblem }: ChannelDefinition<unknown, unknown>): ChannelWire {
  return {
    streamIds,
    ...(checksum === undefined ? {} : { checksummed: true }),
    dataProblem: (message, snapshot) =>
      isObject(message.data) ? dataProblem({ ...message, data: message.data }, snapshot) : 'data',
  };
}

/** Every channel's wire form (./definition.ts `ChannelWire`), by name. */
export const channelWires: { readonly [C in ChannelName]: ChannelWire } = {
  book: bookWire,
  price: priceWire,
  market: marketWire,
  markets: marketsWire,
  rest: restWire,
  ...(Object.fromEntries(
    Object.entries(channelDefinitions).map(([channel, definition]) => [channel, wireOf(definition)]),
  ) as Record<DefinedChannel, ChannelWire>),
};

/** Whether `channel`'s streams are cut to a depth and may be grouped (a channel's `depths`). */
export function hasDepths(channel: string): boolean {
  return Object.hasOwn(channelWires, channel) && channelWires[channel as ChannelName].depths === true;
}

/** Whether `channel`'s stream ids are paths, which the wire names `path` and `paths`. */
export function idsArePaths(channel: string): boolean {
  return (
    Object.hasOwn(channelWires, channel) && channelWires[channel as ChannelName].streamIds.kind === 'path'
  );
}

/** The field a selection of `channel` lists its stream ids in on the wire (`paths` or `markets`). */
export function idsField(channel: string): typeof PATHS_FIELD | typeof STREAM_IDS_FIELD {
  return idsArePaths(channel) ? PATHS_FIELD : STREAM_IDS_FIELD;
}

/**
 * The defined channels whose SDK subscriptions hold something else than the snapshot's data with
 * each update applied, or add events of their own: that state and those events.
 */
interface HeldChannelData {
  trades: { state: TradesState; events: TradeEvents };
  orders: { state: OrderMapState; events: OrderEvents };
  candles: { state: CandlesState; events: CandleEvents };
}
type HeldChannel = keyof HeldChannelData;

/** The state an SDK subscription of `C` holds. */
export type HeldState<C extends DefinedChannel> = C extends HeldChannel
  ? HeldChannelData[C]['state']
  : DefinedChannelData[C]['snapshot'];
/** The events an SDK subscription of `C` adds to every stream's. */
export type HeldEvents<C extends DefinedChannel> = C extends HeldChannel
  ? HeldChannelData[C]['events']
  : Record<never, never>;

/** How the SDK holds a stream of `C`. */
export type HeldStreamOf<C extends DefinedChannel> = HeldStream<
  DefinedChannelData[C]['snapshot'],
  DefinedChannelData[C]['update'],
  HeldState<C>,
  HeldEvents<C>
>;

const holders: { readonly [C in HeldChannel]: () => HeldStreamOf<C> } = {
  trades: holdTrades,
  orders: holdOrders,
  candles: holdCandles<Candle>,
};

/** A new hold of a `channel` stream, for one SDK subscription. */
export function holdStream<C extends DefinedChannel>(channel: C): HeldStreamOf<C> {
  // TypeScript does not narrow C by the key test, hence the casts; the tables above are typed per channel.
  if (Object.hasOwn(holders, channel)) return holders[channel as HeldChannel]() as unknown as HeldStreamOf<C>;
  const { apply, checksum } = channelDefinitions[channel];
  return { stateOf: (snapshot) => snapshot, apply, checksum } as HeldStreamOf<C>;
}
