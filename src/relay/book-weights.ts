/**
 * @module relay/book-weights
 * The order-book targets' share of the budget between connections (relay/fair-share.ts): each
 * market's weight follows who subscribes to the streams its one request serves.
 */
import { bookTargetKey } from './book-target.ts';
import { fairShare, type Interest, interestOf } from './fair-share.ts';
import type { StreamRegistry } from './registry.ts';
import type { AnyStream, StreamSubscriber } from './stream.ts';

/** The weight of each market's book target, by target key, from the registry's subscribers now. */
export function bookWeights(registry: StreamRegistry, markets: Iterable<string>): Map<string, number> {
  const interest = new Map<string, Interest<StreamSubscriber>>();
  for (const market of markets) {
    interest.set(bookTargetKey(market), interestOf(subscribersOf(bookTargetStreams(registry, market))));
  }
  return fairShare(interest).weights;
}

/** The streams one order-book request serves: a market's `book` streams and its `orders` stream. */
export function* bookTargetStreams(registry: StreamRegistry, market: string): Iterable<AnyStream> {
  yield* registry.streamsOf('book', market);
  yield* registry.streamsOf('orders', market);
}

function* subscribersOf(streams: Iterable<AnyStream>): Iterable<StreamSubscriber> {
  for (const stream of streams) yield* stream.subscribers;
}
