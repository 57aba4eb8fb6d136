/**
 * A book target keeps its market's streams here rather than asking the registry on each poll
 * (relay/channels/book/book-target.ts `BookStreams`, made again by book-targets.ts as streams come
 * and go). A stream subscribed between two polls, or while a request is in flight, must get the
 * next poll's state, and a stream removed meanwhile must not be published to: ungrouped depths,
 * grouped books and the channels served from the book alike.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { BookState } from '../../../../packages/protocol/src/protocol/book.ts';
import type { BookDepth } from '../../../../packages/protocol/src/protocol/messages.ts';
import { pollTargets } from '../../../../src/poll-targets.ts';
import { LocalBroker } from '../../../../src/relay/coordination/local/broker.ts';
import { RelayEvents } from '../../../../src/relay/events.ts';
import { PollerPool } from '../../../../src/relay/poll/poller-pool.ts';
import { StreamRegistry } from '../../../../src/relay/streams/registry.ts';
import type { AnyStream, StreamSubscriber } from '../../../../src/relay/streams/stream.ts';
import type { StreamIdentity } from '../../../../src/relay/streams/stream-identity.ts';
import type { OrderBook } from '../../../../src/upstream/schemas.ts';
import { pollSourceOf } from '../../../support/poll-source.ts';
import { waitFor } from '../../../support/wait-for.ts';

const MARKET = '3f2b8c1e-5d4a-4e6f-9a7b-1c2d3e4f5a6b';
const nobody: StreamSubscriber = { deliver() {}, notify() {}, ended() {} };

/** A book whose best bid's size is `size`, with `levels` bid levels. */
function bookOf(size: string, levels: number, second: number): OrderBook {
  return {
    market_id: MARKET,
    bids: Array.from({ length: levels }, (_, i) => ({
      id: `b${i}`,
      price: `0.${55 - i}000000`,
      size: i === 0 ? size : '1',
      token_id: 1,
    })),
    asks: [{ id: 'a1', price: '0.57000000', size: '4.5', token_id: 1 }],
    last_price: '0.56000000',
    timestamp: `2025-01-01T00:00:0${second}.000Z`,
  };
}

describe("a book target's streams, as they come and go between polls", () => {
  let poller: PollerPool | undefined;
  afterEach(() => poller?.stop());

  /** A poller whose book requests wait until the test answers them. */
  function setup() {
    const asks: ((book: OrderBook) => void)[] = [];
    const source = pollSourceOf({
      orderBook: () => new Promise<OrderBook>((resolve) => asks.push(resolve)),
    });
    const registry = new StreamRegistry({ lingerMs: 1, resumeBufferSize: 10 });
    poller = new PollerPool({
      targets: pollTargets,
      source,
      broker: new LocalBroker(),
      registry,
      events: new RelayEvents(),
      bookPollMs: 20,
      pricePollMs: 20,
      upstreamRps: 1_000,
      concurrency: 4,
      scheduler: 'freshness',
      maxAgeMs: 1_000,
      staleAfterFactor: 3,
    });
    /** Answers the request asked (waiting for it if none is yet) with `book`. */
    const answer = async (book: OrderBook) => {
      await waitFor('a book request', () => asks.length > 0);
      for (const resolve of asks.splice(0)) resolve(book);
    };
    const subscribe = (identity: Omit<StreamIdentity, 'market'>) => {
      const subscriber: StreamSubscriber = { ...nobody };
      return { subscriber, stream: registry.subscribe(subscriber, { ...identity, market: MARKET }) };
    };
    /** Unsubscribes the stream and waits until the registry has removed it. */
    const remove = async ({ subscriber, stream }: { subscriber: StreamSubscriber; stream: AnyStream }) => {
      registry.unsubscribe(subscriber, stream);
      await waitFor('the stream removed', () => registry.get(stream) === undefined);
    };
    return { asks, answer, subscribe, remove };
  }

  const book = (depth: BookDepth, group?: string) => ({ channel: 'book' as const, depth, group });
  const bidsOf = (stream: AnyStream) => (stream.state as BookState).bids;

  it('serves a stream added while a request is in flight, and not one removed meanwhile', async () => {
    const { asks, answer, subscribe, remove } = setup();
    const top = subscribe(book(1));
    const grouped = subscribe(book(10, '0.01'));
    const orders = subscribe({ channel: 'orders' });
    await answer(bookOf('2', 2, 0));
    await waitFor('the first states', () => [top, grouped, orders].every(({ stream }) => stream.hasState));

    // The next request is asked and not answered yet: streams come and go meanwhile.
    await waitFor('the next request', () => asks.length > 0);
    const full = subscribe(book(null));
    const coarse = subscribe(book(10, '0.1'));
    const gone = [top, grouped, orders].map(({ stream }) => ({
      stream,
      seq: stream.seq,
      state: stream.state,
    }));
    for (const held of [top, grouped, orders]) await remove(held);
    await answer(bookOf('5', 3, 1));
    await waitFor('the new streams’ snapshots', () => full.stream.hasState && coarse.stream.hasState);
    expect(bidsOf(full.stream)).toEqual([
      ['0.55000000', '5'],
      ['0.54000000', '1'],
      ['0.53000000', '1'],
    ]);
    expect(bidsOf(coarse.stream)).toEqual([['0.50000000', '7']]);
    for (const { stream, seq, state } of gone) {
      expect(stream.seq).toBe(seq);
      expect(stream.state).toEqual(state);
    }

    // Between two polls: a depth comes, another goes, before the next request is answered.
    const second = subscribe(book(5));
    const before = { seq: full.stream.seq, state: full.stream.state };
    await remove(full);
    await answer(bookOf('6', 7, 2));
    await waitFor('the added depth’s snapshot', () => second.stream.hasState);
    expect(bidsOf(second.stream).map(([, size]) => size)).toEqual(['6', '1', '1', '1', '1']);
    expect({ seq: full.stream.seq, state: full.stream.state }).toEqual(before);
    await waitFor('the grouped book’s update', () => bidsOf(coarse.stream)[0]?.[1] === '11');
  });
});
