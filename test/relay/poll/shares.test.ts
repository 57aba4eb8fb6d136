/**
 * The poller's budget shared by who asks, on a fake clock: an owner holding thousands of `rest`
 * paths leaves another owner's book at its interval and is itself polled less often (each of its
 * streams told so by going stale), every page of a catalogue read takes a token of the budget, and
 * the shares are reported per owner.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { pollTargets } from '../../../src/poll-targets.ts';
import { LocalBroker } from '../../../src/relay/coordination/local/broker.ts';
import { RelayEvents } from '../../../src/relay/events.ts';
import { PollerPool, type PollSource } from '../../../src/relay/poll/poller-pool.ts';
import { RELAY_GROUP } from '../../../src/relay/poll/share-groups.ts';
import type { Frame } from '../../../src/relay/streams/frame.ts';
import { StreamRegistry } from '../../../src/relay/streams/registry.ts';
import type { AnyStream, StreamSubscriber } from '../../../src/relay/streams/stream.ts';
import type { MarketsResponse, OrderBook } from '../../../src/upstream/schemas.ts';

const marketId = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;

/** Answers at once: books, any public body, and a catalogue of `catalogueSize` markets in pages. */
function instantSource(calls: Map<string, number>, catalogueSize = 0): PollSource {
  const count = (key: string) => calls.set(key, (calls.get(key) ?? 0) + 1);
  const refuse = () => Promise.reject(new Error('not scripted'));
  return {
    orderBook(market): Promise<OrderBook> {
      count(`book ${market}`);
      return Promise.resolve({
        market_id: market,
        bids: [],
        asks: [],
        last_price: '0.50000000',
        timestamp: new Date().toISOString(),
      });
    },
    publicBody(request): Promise<unknown> {
      count(`rest ${request.pathname}`);
      return Promise.resolve({ at: Date.now() });
    },
    markets({ limit = 100, offset = 0 }): Promise<MarketsResponse> {
      count('markets page');
      const markets = Array.from(
        { length: Math.max(0, Math.min(limit, catalogueSize - offset)) },
        (_, i) => ({
          market_id: marketId(offset + i),
          title: `market ${offset + i}`,
          status: 'ACTIVE' as const,
          exchange_address: '0xab',
          oracle_address: '0xcd',
          expiration_timestamp: '2030-01-01T00:00:00.000Z',
          taker_fee_bps: 0,
          probability: 0.5,
          volume: 0,
        }),
      );
      return Promise.resolve({
        success: true,
        markets,
        pagination: { total: catalogueSize, limit, offset, hasMore: offset + limit < catalogueSize },
      });
    },
    clobPrices: refuse,
    probabilities: refuse,
    market: refuse,
    tokenPrice: refuse,
    marketActivity: refuse,
  };
}

/** A subscriber that records the stale statuses it is sent. */
function subscriber(): StreamSubscriber & { stale: Set<string> } {
  const stale = new Set<string>();
  return {
    stale,
    deliver(_stream: AnyStream, _frame: Frame) {},
    notify(stream: AnyStream, frame: Frame) {
      if (frame.text.includes('"stale"')) stale.add(stream.key);
    },
    ended() {},
  };
}

describe('the budget shared by owner', () => {
  let poller: PollerPool | undefined;
  afterEach(() => {
    poller?.stop();
    vi.useRealTimers();
  });

  function setup(source: PollSource, owners: Map<StreamSubscriber, string>, rps: number) {
    const registry: StreamRegistry = new StreamRegistry({
      lingerMs: 10,
      resumeBufferSize: 10,
    });
    poller = new PollerPool({
      targets: pollTargets,
      source,
      broker: new LocalBroker(),
      registry,
      events: new RelayEvents(),
      bookPollMs: 1_000,
      pricePollMs: 1_000,
      upstreamRps: rps,
      concurrency: 16,
      scheduler: 'freshness',
      // Every stream confirmed within 10 s while the budget allows, else stale after 13 s.
      maxAgeMs: 10_000,
      staleAfterFactor: 3,
      shareOwner: (s) => owners.get(s) ?? s,
    });
    return { registry, poller };
  }

  it('keeps a book at its interval beside an owner of 2,000 rest paths, which gets the rest of the budget', async () => {
    vi.useFakeTimers();
    const calls = new Map<string, number>();
    const [attacker, neighbour] = [subscriber(), subscriber()];
    const { registry, poller: pool } = setup(
      instantSource(calls),
      new Map([
        [attacker, 'address 10.0.0.1'],
        [neighbour, 'address 10.0.0.2'],
      ]),
      20,
    );
    registry.subscribe(neighbour, { channel: 'book', market: marketId(1), depth: null });
    for (let i = 0; i < 2_000; i++)
      registry.subscribe(attacker, { channel: 'rest', market: `/api/users/u${i}/activity` });
    await vi.advanceTimersByTimeAsync(30_000);
    // Once a second, as without the attacker.
    expect(calls.get(`book ${marketId(1)}`)).toBeGreaterThanOrEqual(28);
    let rest = 0;
    for (const [key, count] of calls) if (key.startsWith('rest ')) rest += count;
    // The polling budget (18/s) less the book's one a second.
    expect(rest).toBeGreaterThanOrEqual(30 * 16);
    expect(rest).toBeLessThanOrEqual(30 * 18 + 10);
    // The attacker's streams, polled far less often than asked, say so; the neighbour's never.
    expect(attacker.stale.size).toBeGreaterThan(1_000);
    expect(neighbour.stale.size).toBe(0);
    // Beside the relay's own (the change hints read while the budget is short).
    const shares = pool.shares().filter((share) => share.group !== RELAY_GROUP);
    expect(shares.map((share) => [share.group, share.targets])).toEqual([
      ['address 10.0.0.1', 2_000],
      ['address 10.0.0.2', 1],
    ]);
    expect(shares[0]!.share).toBeGreaterThan(0.85);
  });

  it('takes a token of the budget for every page of a catalogue read, not one per read', async () => {
    vi.useFakeTimers();
    const calls = new Map<string, number>();
    const reader = subscriber();
    const { registry } = setup(instantSource(calls, 2_000), new Map([[reader, 'address 10.0.0.3']]), 10);
    registry.subscribe(reader, { channel: 'markets', market: 'all' });
    await vi.advanceTimersByTimeAsync(20_000);
    const pages = calls.get('markets page') ?? 0;
    // 20 pages a read: one read a second would be 400 pages; the budget (9/s) allows about 180.
    expect(pages).toBeGreaterThanOrEqual(150);
    expect(pages).toBeLessThanOrEqual(9 * 20 + 2);
  });

  it('makes or drops only its own target when a stream comes or goes, however many others there are', async () => {
    vi.useFakeTimers();
    const holder = subscriber();
    const { registry, poller: pool } = setup(
      instantSource(new Map()),
      new Map([[holder, 'address 10.0.0.4']]),
      20,
    );
    for (let i = 0; i < 2_000; i++)
      registry.subscribe(holder, { channel: 'rest', market: `/api/search?q=${i}` });
    await vi.advanceTimersByTimeAsync(50); // their holders filed, their first polls under way
    const ids = vi.spyOn(registry, 'ids');
    const streamsOf = vi.spyOn(registry, 'streamsOf');
    const stream = registry.subscribe(holder, { channel: 'rest', market: '/api/search?q=new' });
    registry.unsubscribe(holder, stream);
    await vi.advanceTimersByTimeAsync(50); // the linger ends: the stream and its target go
    expect(pool.targetCount('rest')).toBe(2_000);
    // No walk over the 2,000 others: look-ups of the one stream id and of the few polls made
    // meanwhile, not one per target.
    expect(ids.mock.calls.filter(([channel]) => channel === 'rest').length).toBeLessThan(50);
    expect(streamsOf.mock.calls.length).toBeLessThan(50);
  });
});
