/**
 * @module test/client/sdk-support
 * Helpers for the SDK's integration tests: an SDK client with fast backoff that records its
 * events, and waits for the SDK's books and prices to equal the simulator's (upstream's) own view.
 */
import { isDeepStrictEqual } from 'node:util';
import { expect } from 'vitest';
import type { RelayClientError } from '../../packages/client/src/events/client-error.ts';
import {
  type BookSubscription,
  type ConnectOptions,
  connect,
  type PriceSubscription,
  type ResyncReason,
} from '../../packages/client/src/node.ts';
import { priceDataOf } from '../../src/relay/channels/price/codec.ts';
import type { Relay } from '../../src/relay-server.ts';
import type { SimulatorHandle } from '../../src/sim/server.ts';
import { expectedBook, upstreamBook, upstreamPrices } from '../support/harness.ts';
import { waitFor } from '../support/wait-for.ts';

export const fastBackoff = { baseMs: 20, maxMs: 200, goingAwaySpreadMs: 100 };

export interface RecordedClient {
  client: ReturnType<typeof connect>;
  errors: RelayClientError[];
  closes: number[];
  opens: boolean[];
}

export function connectRecorded(url: string, options: ConnectOptions = {}): RecordedClient {
  const client = connect(url, { backoff: fastBackoff, ...options });
  const recorded: RecordedClient = { client, errors: [], closes: [], opens: [] };
  client.on('error', (error) => recorded.errors.push(error));
  client.on('close', ({ code }) => recorded.closes.push(code));
  client.on('open', ({ reconnect }) => recorded.opens.push(reconnect));
  return recorded;
}

/** Waits until each book equals what its stream should show for upstream's book now. */
/** Every resync of `books`, in order, as they happen. */
export function recordResyncs(books: BookSubscription[]): ResyncReason[] {
  const reasons: ResyncReason[] = [];
  for (const book of books) book.on('resync', ({ reason }) => reasons.push(reason));
  return reasons;
}

export async function expectBooksEqualUpstream(
  sim: SimulatorHandle,
  books: BookSubscription[],
): Promise<void> {
  for (const book of books) {
    const expected = expectedBook(await upstreamBook(sim, book.market), book.depth);
    await waitFor(`book ${book.market} depth ${book.depth} to equal upstream`, () =>
      book.status === 'live' && isDeepStrictEqual(book.state, expected) ? true : undefined,
    );
    expect(book.state).toEqual(expected);
  }
}

export async function expectPricesEqualUpstream(
  sim: SimulatorHandle,
  prices: PriceSubscription[],
): Promise<void> {
  const upstream = new Map(
    (
      await upstreamPrices(
        sim,
        prices.map((p) => p.market),
      )
    ).map((e) => [e.market_id, e]),
  );
  for (const price of prices) {
    const expected = priceDataOf(upstream.get(price.market)!);
    await waitFor(`price ${price.market} to equal upstream`, () =>
      isDeepStrictEqual(price.state, expected) ? true : undefined,
    );
  }
}

/** Ticks the simulator and waits until the relay published the change on the full-book stream of `market`. */
export async function tickAndPublish(sim: SimulatorHandle, relay: Relay, market: string): Promise<void> {
  const stream = relay.registry.get({ channel: 'book', market, depth: null });
  if (stream === undefined) throw new Error(`the relay has no full-book stream of ${market}`);
  const seq = stream.seq;
  sim.tick();
  await waitFor('the relay to publish the tick', () => stream.seq > seq);
}
