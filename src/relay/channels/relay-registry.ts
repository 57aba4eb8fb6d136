/**
 * @module relay/channels/relay-registry
 * The server part of every channel with a folder of its own (./relay-definition.ts), listed once;
 * the relay diffs, polls, publishes and bounds them through here (relay/channels/codecs.ts,
 * relay/poll/stream-targets.ts, relay/admission/group-streams.ts), which of them a market's book
 * target serves, the change-hint map the books read, and their polls' events, which the relay
 * takes into its own (relay/events.ts); and what the rest of the relay asks of a channel by name
 * (depths, threshold, market ids, the active catalogue, bounds on ids), so that nothing outside
 * these folders names one. Node code: the SDK reads channels/registry.ts instead.
 */

import type { StreamIdKind } from '../../../packages/protocol/src/channels/definition.ts';
import {
  type Candle,
  type DefinedChannel,
  type DefinedChannelData,
  isDefinedChannel,
} from '../../../packages/protocol/src/channels/registry.ts';
import { type Channel, streamIdKinds } from '../../../packages/protocol/src/protocol/channels.ts';
import type { ProbabilitiesResponse } from '../../upstream/schemas.ts';
import { bookNumbering } from './book/codec.ts';
import { type CandlesGroupLimits, candlesRelay } from './candles/relay.ts';
import { type HistoryUpstream, historyCandles } from './candles/relay-history.ts';
import { closingChannel } from './market/relay.ts';
import { type CatalogueGroupLimits, marketsBound } from './markets/relay.ts';
import { type OracleUpstream, oracleRelay } from './oracle/relay.ts';
import { ordersRelay } from './orders/relay.ts';
import { priceNumbering } from './price/codec.ts';
import {
  type ProbabilitiesUpstream,
  probabilitiesChannel,
  probabilitiesHints,
  probabilitiesRelay,
} from './probabilities/relay.ts';
import type { RelayCandleSource } from './relay-candle-source.ts';
import type { ChannelEvents, IdBound, RelayChannel, ServesHistory } from './relay-definition.ts';
import { type RestGroupLimits, restBound } from './rest/relay.ts';
import { tradesEvents, tradesRelay } from './trades/relay.ts';
import type { ActivityUpstream } from './trades/relay-activity-pages.ts';
import { tradesCandleSource } from './trades/relay-candle-source.ts';
import type { TradesEventMap } from './trades/relay-poll.ts';

/** Every upstream call the defined channels poll with (the relay's poll source makes them all). */
export type ChannelUpstream = OracleUpstream & ProbabilitiesUpstream & ActivityUpstream & HistoryUpstream;

/** The limits of the channels bounded per connection and address group, in the relay's isolation limits. */
export type ChannelGroupLimits = CandlesGroupLimits;

/** The sources of `candles` on the server, as the channels that have them offer them (channels/registry.ts lists their names). */
export const candleSeriesSources: readonly RelayCandleSource<ChannelUpstream, ChannelEventMap>[] = [
  historyCandles,
  tradesCandleSource,
];

export const relayChannels: {
  readonly [C in DefinedChannel]: RelayChannel<
    ChannelUpstream,
    DefinedChannelData[C]['snapshot'],
    DefinedChannelData[C]['update'],
    ChannelEventMap,
    ChannelGroupLimits
  >;
} = {
  trades: tradesRelay,
  probabilities: probabilitiesRelay,
  oracle: oracleRelay,
  orders: ordersRelay,
  candles: candlesRelay<ChannelUpstream, ChannelEventMap, Candle>(candleSeriesSources),
};

/**
 * The channels whose streams of a market are numbered as one poll target (a book's depths, a
 * price), by whichever broker numbers them (relay/coordination/codecs.ts).
 */
export const numberedChannels = { book: bookNumbering, price: priceNumbering } as const;
export type NumberedChannel = keyof typeof numberedChannels;

export function isNumberedChannel(channel: string): channel is NumberedChannel {
  return Object.hasOwn(numberedChannels, channel);
}

/** The channel whose streams are cut to a depth and grouped by a price step: a market's book. */
export const depthChannel = numberedChannels.book.channel;
export type DepthChannel = typeof depthChannel;

/** Whether `channel`'s streams take a `depth` and a `group` (protocol.md "`book` data"). */
export function hasDepths(channel: string): channel is DepthChannel {
  return channel === depthChannel;
}

/**
 * The channel whose streams take a `threshold`: a market's price, whose best bid, best ask and
 * midpoint are the prices a move is measured on (protocol.md "`price` data"). Its stream of a market
 * holds upstream's batch price entry of that market.
 */
export const thresholdChannel = numberedChannels.price.channel;
export type ThresholdChannel = typeof thresholdChannel;

/** Whether `channel`'s streams take a `threshold`. */
export function hasThreshold(channel: string): channel is ThresholdChannel {
  return channel === thresholdChannel;
}

/** The kind of stream id that is a market's UUID (protocol/channels.ts `streamIdKinds`). */
export const MARKET_IDS = 'market' satisfies StreamIdKind;

/** Whether `channel`'s stream ids are market UUIDs. */
export function idsAreMarkets(channel: Channel): boolean {
  return streamIdKinds[channel] === MARKET_IDS;
}

/**
 * Whether `channel`'s stream of a market closes itself once the market is no longer active (its
 * last update says so): what lets it go may leave that to it.
 */
export function closesWhenInactive(channel: string): boolean {
  return channel === closingChannel;
}

/** The catalogue stream of every active market, which wildcards and `--record` with `*` follow. */
export { activeCatalogue } from './markets/relay.ts';

/** The isolation limits of the bounds on ids only a poll may confirm. */
export type IdGroupLimits = RestGroupLimits & CatalogueGroupLimits;

/**
 * The channels whose distinct stream ids are bounded per connection and address group by options
 * of the relay's own, ids upstream may not know (relay/admission/group-streams.ts), in the order
 * a `list` reports their use.
 */
export const idBounds: readonly IdBound<Channel, IdGroupLimits>[] = [restBound, marketsBound];

/** The events of every defined channel's polls, with their fields. */
export type ChannelEventMap = TradesEventMap;

/** What each of them logs and counts. */
export const channelEvents: ChannelEvents<ChannelEventMap> = { ...tradesEvents };

/**
 * The channel whose polled map is also the books' change hints, and how they read it
 * (relay/channels/book/change-hint-target.ts): its polls are read for both, and the hints make a request of
 * their own only while no stream of the channel polls the map.
 */
export const hintMap = { channel: probabilitiesChannel, ...probabilitiesHints } as const;
export type HintMapChannel = typeof hintMap.channel;
export type HintMapResponse = ProbabilitiesResponse;

/** The channels whose streams their market's book target serves beside its `book` streams. */
export const bookServedChannels: readonly DefinedChannel[] = (
  Object.keys(relayChannels) as DefinedChannel[]
).filter((channel) => relayChannels[channel].fromBook !== undefined);

/** The history `channel` serves, if it serves one (relay/session/since-seam.ts). */
export function historyOf(channel: string): ServesHistory<ChannelUpstream, unknown, unknown> | undefined {
  // The table is typed per channel; the seam handles a stream's data only through these functions.
  return isDefinedChannel(channel)
    ? (relayChannels[channel].history as ServesHistory<ChannelUpstream, unknown, unknown> | undefined)
    : undefined;
}
