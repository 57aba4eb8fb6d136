/**
 * @module channels/relay-registry
 * The server part of every channel with a folder of its own (./relay-definition.ts), listed once;
 * the relay diffs, polls and publishes them through here (relay/channels/codecs.ts,
 * relay/targets/stream-targets.ts), and takes their polls' events into its own (relay/events.ts).
 * Node code: the SDK reads ./registry.ts instead.
 */
import { type OracleUpstream, oracleRelay } from './oracle/relay.ts';
import { ordersRelay } from './orders/relay.ts';
import { type ProbabilitiesUpstream, probabilitiesRelay } from './probabilities/relay.ts';
import type { DefinedChannel, DefinedChannelData } from './registry.ts';
import type { ChannelEvents, RelayChannel } from './relay-definition.ts';
import { tradesEvents, tradesRelay } from './trades/relay.ts';
import type { ActivityUpstream } from './trades/relay-activity-pages.ts';
import type { TradesEventMap } from './trades/relay-poll.ts';

/** Every upstream call the defined channels poll with (the relay's poll source makes them all). */
export type ChannelUpstream = OracleUpstream & ProbabilitiesUpstream & ActivityUpstream;

export const relayChannels: {
  readonly [C in DefinedChannel]: RelayChannel<
    ChannelUpstream,
    DefinedChannelData[C]['snapshot'],
    DefinedChannelData[C]['update'],
    ChannelEventMap
  >;
} = { trades: tradesRelay, probabilities: probabilitiesRelay, oracle: oracleRelay, orders: ordersRelay };

/** The events of every defined channel's polls, with their fields. */
export type ChannelEventMap = TradesEventMap;

/** What each of them logs and counts. */
export const channelEvents: ChannelEvents<ChannelEventMap> = { ...tradesEvents };
