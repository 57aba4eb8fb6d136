/**
 * @module channels/relay-registry
 * The server part of every channel with a folder of its own (./relay-definition.ts), listed once;
 * the relay diffs, polls, publishes and bounds them through here (relay/channels/codecs.ts,
 * relay/targets/stream-targets.ts, relay/admission/group-streams.ts). Node code: the SDK reads
 * ./registry.ts instead.
 */
import { type CandlesGroupLimits, type CandlesUpstream, candlesRelay } from './candles/relay.ts';
import { type OracleUpstream, oracleRelay } from './oracle/relay.ts';
import { ordersRelay } from './orders/relay.ts';
import { type ProbabilitiesUpstream, probabilitiesRelay } from './probabilities/relay.ts';
import type { DefinedChannel, DefinedChannelData } from './registry.ts';
import type { RelayChannel } from './relay-definition.ts';
import { tradesRelay } from './trades/relay.ts';

/** Every upstream call the defined channels poll with (the relay's poll source makes them all). */
export type ChannelUpstream = OracleUpstream & ProbabilitiesUpstream & CandlesUpstream;

/** The limits of the channels bounded per connection and address group, in the relay's isolation limits. */
export type ChannelGroupLimits = CandlesGroupLimits;

export const relayChannels: {
  readonly [C in DefinedChannel]: RelayChannel<
    ChannelUpstream,
    DefinedChannelData[C]['snapshot'],
    DefinedChannelData[C]['update'],
    ChannelGroupLimits
  >;
} = {
  trades: tradesRelay,
  probabilities: probabilitiesRelay,
  oracle: oracleRelay,
  orders: ordersRelay,
  candles: candlesRelay,
};
