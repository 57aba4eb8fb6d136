/**
 * @module relay/targets/book-weights
 * The order-book targets' share of the budget between connections and API keys
 * (relay/poll/fair-share.ts): each market's weight follows who subscribes to the streams its one
 * request serves, a subscriber counting as its owner (its API key, or itself).
 */
import { bookTargetKey } from '../../util/keys.ts';
import { fairShare, type Interest, interestOf } from '../poll/fair-share.ts';
import type { StreamRegistry } from '../streams/registry.ts';
import type { AnyStream, StreamSubscriber } from '../streams/stream.ts';

/**
 * The weight of each market's book target, by target key, from the registry's subscribers now;
 * `ownerOf` says who a subscriber counts as (default: itself).
 */
export function bookWeights(
  registry: StreamRegistry,
  markets: Iterable<string>,
  ownerOf: (subscriber: StreamSubscriber) => unknown = (subscriber) => subscriber,
): Map<string, number> {
  const interest = new Map<string, Interest<unknown>>();
  for (const market of markets) {
    interest.set(bookTargetKey(market), interestOf(ownersOf(bookTargetStreams(registry, market), ownerOf)));
  }
  return fairShare(interest).weights;
}

/** The streams one order-book request serves: a market's `book` streams and its `orders` stream. */
export function* bookTargetStreams(registry: StreamRegistry, market: string): Iterable<AnyStream> {
  yield* registry.streamsOf('book', market);
  yield* registry.streamsOf('orders', market);
}

function* ownersOf(
  streams: Iterable<AnyStream>,
  ownerOf: (subscriber: StreamSubscriber) => unknown,
): Iterable<unknown> {
  for (const stream of streams) for (const subscriber of stream.subscribers) yield ownerOf(subscriber);
}
