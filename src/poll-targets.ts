/**
 * @module poll-targets
 * The poll side's one list of what is polled: each slice's collection of targets, made from the
 * channel registry, handed to the poller pool (relay/poll/poller-pool.ts), which names no channel.
 * The books and the price batches are their slices' own collections; every other channel polled
 * per stream id has one target per stream id (relay/poll/stream-targets.ts), made by its slice's
 * row (`market`, `markets`, `rest`) or from what the relay registry declares of it.
 */
import { BookTargets } from './relay/channels/book/book-targets.ts';
import { marketTargets } from './relay/channels/market/market-target.ts';
import { marketsTargets } from './relay/channels/markets/catalogue-target.ts';
import { PriceTargets } from './relay/channels/price/price-targets.ts';
import { restTargets } from './relay/channels/rest/rest-target.ts';
import { definedTargetChannels, StreamTargets } from './relay/poll/stream-targets.ts';
import type { TargetCollectionMaker } from './relay/poll/target-collection.ts';

const streamTargetChannels = [marketTargets, marketsTargets, restTargets, ...definedTargetChannels()];

export const pollTargets: readonly TargetCollectionMaker[] = [
  (parts) => new BookTargets(parts),
  (parts) => new PriceTargets(parts),
  (parts) => new StreamTargets(parts, streamTargetChannels),
];
