/**
 * A book upstream answers with byte for byte as before costs a comparison (relay/channels/book/book-target.ts,
 * upstream/outcome.ts ResponseMemo), and must still do what a poll does: confirm the streams'
 * freshness, publish when the body changes, and fail on a broken body whatever came before it.
 * The real upstream client against a real HTTP server whose body the test sets.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { pollTargets } from '../../../../src/poll-targets.ts';
import { LocalBroker } from '../../../../src/relay/coordination/local/broker.ts';
import { RelayEvents } from '../../../../src/relay/events.ts';
import { PollerPool, type PollSource } from '../../../../src/relay/poll/poller-pool.ts';
import type { Frame } from '../../../../src/relay/streams/frame.ts';
import { StreamRegistry } from '../../../../src/relay/streams/registry.ts';
import type { AnyStream, StreamSubscriber } from '../../../../src/relay/streams/stream.ts';
import { UpstreamClient } from '../../../../src/upstream/client.ts';
import { UpstreamSchemaError } from '../../../../src/upstream/errors.ts';
import type { OrderBook } from '../../../../src/upstream/schemas.ts';
import { waitFor } from '../../../support/wait-for.ts';
import { json, type ScriptedServer, startScriptedServer } from '../../../upstream/scripted-server.ts';

const MARKET = '3f2b8c1e-5d4a-4e6f-9a7b-1c2d3e4f5a6b';

const bookBody = (bidSize: string, timestamp: string) => ({
  market_id: MARKET,
  bids: [
    { id: 'b1', price: '0.55000000', size: bidSize, token_id: 1 },
    { id: 'b2', price: '0.55000000', size: '1', token_id: 1 },
  ],
  asks: [{ id: 'a1', price: '0.57000000', size: '4.5', token_id: 1 }],
  last_price: '0.56000000',
  timestamp,
});

/** What a subscriber received, in order. */
class Recorder implements StreamSubscriber {
  readonly kinds: string[] = [];
  readonly statuses: string[] = [];
  deliver(_stream: AnyStream, _frame: Frame, kind: 'snapshot' | 'update'): void {
    this.kinds.push(kind);
  }
  notify(_stream: AnyStream, frame: Frame): void {
    this.statuses.push(frame.text);
  }
  ended(): void {}
}

describe('a book polled with the same body again', () => {
  let server: ScriptedServer | undefined;
  let client: UpstreamClient | undefined;
  let poller: PollerPool | undefined;
  afterEach(async () => {
    poller?.stop();
    await client?.close();
    await server?.close();
  });

  /** A poller of the real client against a server answering `currentBody()`. */
  async function startPolling(currentBody: () => unknown) {
    server = await startScriptedServer((_req, res) => json(res, 200, currentBody()));
    client = new UpstreamClient({ baseUrl: server.url, retries: 0 });
    const events = new RelayEvents();
    const registry: StreamRegistry = new StreamRegistry({
      lingerMs: 10,
      resumeBufferSize: 10,
    });
    // What the client resolved each poll to: the book as parsed, then, for the same bytes again,
    // one and the same object (the memo's stand-in, without the orders the streams no longer need).
    const books: OrderBook[] = [];
    const upstream = client;
    const source: PollSource = {
      orderBook: async (market, init) => {
        const book = await upstream.orderBook(market, init);
        books.push(book);
        return book;
      },
      clobPrices: (markets) => upstream.clobPrices(markets),
      probabilities: () => upstream.probabilities(),
      market: (market) => upstream.market(market),
      markets: (query) => upstream.markets(query),
      tokenPrice: (feedId) => upstream.tokenPrice(feedId),
      marketActivity: (market, page) => upstream.marketActivity(market, page),
      publicBody: (request) => upstream.publicBody(request),
    };
    poller = new PollerPool({
      targets: pollTargets,
      source,
      broker: new LocalBroker(),
      registry,
      events,
      bookPollMs: 10,
      pricePollMs: 10,
      upstreamRps: 1_000,
      concurrency: 4,
      scheduler: 'freshness',
      maxAgeMs: 1_000,
      staleAfterFactor: 3,
    });
    const confirmations: number[] = [];
    const failures: unknown[] = [];
    events.on('poll:confirmed', ({ ageMs }) => confirmations.push(ageMs));
    events.on('poll:done', ({ outcome, error }) => {
      if (outcome === 'error') failures.push(error);
    });
    return { registry, books, confirmations, failures };
  }

  it('confirms without an update, publishes a change, and fails a broken body after it', async () => {
    let body: unknown = bookBody('2', '2025-01-01T00:00:00.000Z');
    const { registry, books, confirmations, failures } = await startPolling(() => body);
    const full = new Recorder();
    const top = new Recorder();
    registry.subscribe(full, { channel: 'book', market: MARKET, depth: null });
    registry.subscribe(top, { channel: 'book', market: MARKET, depth: 10 });
    const stream = () => registry.streamsOf('book', MARKET).values().next().value!;

    // The same bytes again and again: confirmed each time, one snapshot, no update.
    await waitFor('five confirmations of the unchanged book', () => confirmations.length >= 5);
    expect(full.kinds).toEqual(['snapshot']);
    expect(new Set(books.slice(1)).size).toBe(1);
    expect(books.at(-1)).toMatchObject({ bids: [], asks: [], timestamp: '2025-01-01T00:00:00.000Z' });
    const confirmedAt = stream().lastSuccessAt;
    await waitFor('another confirmation', () => stream().lastSuccessAt > confirmedAt);
    expect(stream().state).toEqual({
      bids: [['0.55000000', '3']],
      asks: [['0.57000000', '4.5']],
      last_price: '0.56000000',
    });

    // A stream added while the body stays the same gets its first snapshot from the same book.
    const late = new Recorder();
    registry.subscribe(late, { channel: 'book', market: MARKET, depth: 50 });
    await waitFor('the late stream’s snapshot', () => late.kinds.length > 0);
    expect(late.kinds).toEqual(['snapshot']);

    // A changed body is validated, aggregated and published. A poll already answered with the old
    // body may still resolve after the change: the new body's polls are the ones with its time.
    body = bookBody('5', '2025-01-01T00:00:01.000Z');
    await waitFor('the update', () => full.kinds.includes('update'));
    expect(stream().seq).toBe(2);
    expect(stream().state?.bids).toEqual([['0.55000000', '6']]);
    const changedPolls = books.filter((book) => book.timestamp === '2025-01-01T00:00:01.000Z');
    expect(new Set(changedPolls).size).toBeLessThanOrEqual(2);
    // Read straight from its bytes to the levels (relay/channels/book/reader.ts): its orders never become objects.
    expect(changedPolls[0]).toMatchObject({ bids: [], asks: [] });
    expect(top.kinds).toEqual(['snapshot', 'update']);

    // A broken body after the one remembered still fails, with the schema error, and the streams
    // go stale once it keeps failing.
    body = { ...bookBody('5', '2025-01-01T00:00:01.000Z'), bids: [{ id: 'b1', price: '0.55', size: '5' }] };
    await waitFor('a failed poll', () => failures.length > 0);
    expect(failures[0]).toBeInstanceOf(UpstreamSchemaError);
    await waitFor('the stream goes stale', () => (stream().freshness === 'stale' ? true : undefined));
    expect(stream().seq).toBe(2);

    // And the good body back (the one remembered) brings the stream back, unchanged.
    body = bookBody('5', '2025-01-01T00:00:01.000Z');
    await waitFor('the stream is live again', () => (stream().freshness === 'live' ? true : undefined));
    expect(stream().seq).toBe(2);
    expect(full.kinds).toEqual(['snapshot', 'update']);
  });
  it('gives a stream added later the whole book, though the target kept only a stand-in', async () => {
    const { registry, books, confirmations } = await startPolling(() =>
      bookBody('2', '2025-01-01T00:00:00.000Z'),
    );
    const top = new Recorder();
    registry.subscribe(top, { channel: 'book', market: MARKET, depth: 10 });
    await waitFor('three confirmations of the unchanged book', () => confirmations.length >= 3);
    expect(books.at(-1)?.bids).toEqual([]);

    // Deeper than the aggregation kept, and the orders: both need the orders the stand-in has not.
    const full = new Recorder();
    const orders = new Recorder();
    registry.subscribe(full, { channel: 'book', market: MARKET, depth: null });
    registry.subscribe(orders, { channel: 'orders', market: MARKET });
    await waitFor('both snapshots', () => full.kinds.length > 0 && orders.kinds.length > 0);
    const [fullStream] = [...registry.streamsOf('book', MARKET)].filter((stream) => stream.depth === null);
    expect(fullStream?.state).toEqual({
      bids: [['0.55000000', '3']],
      asks: [['0.57000000', '4.5']],
      last_price: '0.56000000',
    });
    const [ordersStream] = registry.streamsOf('orders', MARKET);
    expect(ordersStream?.state).toEqual({
      bids: [
        { id: 'b1', price: '0.55000000', size: '2', token_id: 1 },
        { id: 'b2', price: '0.55000000', size: '1', token_id: 1 },
      ],
      asks: [{ id: 'a1', price: '0.57000000', size: '4.5', token_id: 1 }],
    });
    expect(full.kinds).toEqual(['snapshot']);
    expect(top.kinds).toEqual(['snapshot']);
  });
});
