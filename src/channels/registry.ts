/**
 * @module channels/registry
 * Every channel, listed once: the protocol's channel list in its order, and the channels defined in
 * a folder of their own (their Node-free part, ./definition.ts). The protocol, the SDK and the
 * status page read a channel through here; the relay reads its server part through
 * ./relay-registry.ts. Adding a channel: its folder, a line here and one in ./relay-registry.ts (and,
 * for the SDK's `subscribe…` method, one in client/relay-client.ts).
 */
import type { DataOf } from './definition.ts';
import { oracle } from './oracle/oracle.ts';

export type { OracleData } from './oracle/oracle.ts';

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

/** The channels defined in a folder of their own, by name. */
export const channelDefinitions = { oracle } as const;

export type DefinedChannel = keyof typeof channelDefinitions;

/** Each defined channel's `snapshot` and `update` data. */
export type DefinedChannelData = { [C in DefinedChannel]: DataOf<(typeof channelDefinitions)[C]> };

export function isDefinedChannel(channel: string): channel is DefinedChannel {
  return Object.hasOwn(channelDefinitions, channel);
}
