/**
 * @module relay/channels/market/relay
 * What the relay asks of the `market` channel outside its folder: its stream of a market ends
 * itself once the market is no longer active (the update that says so is its last message,
 * ./market-target.ts), so a wildcard that lets the market go leaves that to it.
 */

/** The channel whose stream of a market closes itself once the market is no longer active. */
export const closingChannel = 'market' as const;
