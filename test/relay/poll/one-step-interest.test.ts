/**
 * A subscribe is one step down: the pool makes (or drops) the target of the one stream id whose
 * interest changed, whatever else it holds, and price batches keep their rules (at most 100
 * markets each, every batch but the last full, no batch cut again but the ones a change touches).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Channel } from '../../../packages/protocol/src/protocol/messages.ts';
import { pollTargets } from '../../../src/poll-targets.ts';
import { LocalBroker } from '../../../src/relay/coordination/local/broker.ts';
import { RelayEvents } from '../../../src/relay/events.ts';
import { PollerPool, type PollSource } from '../../../src/relay/poll/poller-pool.ts';
import { StreamRegistry } from '../../../src/relay/streams/registry.ts';
import type { StreamSubscriber } from '../../../src/relay/streams/stream.ts';
import type { ClobPriceBatchResponse } from '../../../src/upstream/schemas.ts';
import { pollSourceOf } from '../../support/poll-source.ts';
import { waitFor } from '../../support/wait-for.ts';

const marketId = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
const nobody: StreamSubscriber = { deliver() {}, notify() {}, ended() {} };

/** Books never answered; prices answered at once, each batch's markets recorded. */
function source(priceCalls: string[][] = []): PollSource {
  return pollSourceOf({
    clobPrices: (markets): Promise<ClobPriceBatchResponse> => {
      priceCalls.push(markets);
      const timestamp = new Date().toISOString();
      return Promise.resolve({
        data: markets.map((market_id) => ({ market_id, best_bid: '0.4', timestamp })),
      });
    },
  });
}

/** `map` behind a count of the entries read from it: each get or has, each entry iterated. */
function counting<K, V>(map: ReadonlyMap<K, V>, seen: { entries: number }): ReadonlyMap<K, V> {
  function* count<T>(items: Iterable<T>): Generator<T, undefined, unknown> {
    for (const item of items) {
      seen.entries += 1;
      yield item;
    }
    return undefined;
  }
  return {
    get size() {
      return map.size;
    },
    get: (key) => {
      seen.entries += 1;
      return map.get(key);
    },
    has: (key) => {
      seen.entries += 1;
      return map.has(key);
    },
    keys: () => count(map.keys()),
    values: () => count(map.values()),
    entries: () => count(map.entries()),
    forEach: (each) => {
      for (const [key, value] of count(map.entries())) each(value, key, map);
    },
    [Symbol.iterator]: () => count(map.entries()),
  };
}

describe('a change of interest, one step down', () => {
  let poller: PollerPool | undefined;
  afterEach(() => {
    poller?.stop();
    vi.restoreAllMocks();
  });

  function setup(upstream: PollSource, pollMs: number, upstreamRps = 1_000) {
    const registry = new StreamRegistry({ lingerMs: 10, resumeBufferSize: 10 });
    const broker = new LocalBroker();
    poller = new PollerPool({
      targets: pollTargets,
      source: upstream,
      broker,
      registry,
      events: new RelayEvents(),
      bookPollMs: pollMs,
      pricePollMs: pollMs,
      upstreamRps,
      concurrency: 16,
      scheduler: 'freshness',
      maxAgeMs: 30_000,
      staleAfterFactor: 3,
    });
    return { registry, broker, pool: poller };
  }

  it('with 2,000 books and 2,000 price markets held, one new market costs its one target', () => {
    const { registry, broker, pool } = setup(source(), 1_000);
    for (let i = 0; i < 2_000; i++) {
      registry.subscribe(nobody, { channel: 'book', market: marketId(i), depth: null });
      registry.subscribe(nobody, { channel: 'price', market: marketId(10_000 + i) });
    }
    expect([pool.bookMarketCount, pool.priceMarketCount]).toEqual([2_000, 2_000]);
    // From here on, every stream id the pool reads from the registry is counted.
    const seen = { entries: 0 };
    const ids = registry.ids.bind(registry);
    registry.ids = ((channel: Channel) => counting(ids(channel), seen)) as StreamRegistry['ids'];
    const built = vi.spyOn(broker, 'streams');
    const forgotten = vi.spyOn(broker, 'forget');
    const step = (change: () => void): { entries: number; built: number; forgotten: number } => {
      seen.entries = 0;
      built.mockClear();
      forgotten.mockClear();
      change();
      return {
        entries: seen.entries,
        built: built.mock.calls.length,
        forgotten: forgotten.mock.calls.length,
      };
    };

    // A walk over the held targets reads at least 4,000 entries; one target's work, a handful.
    const book = step(() =>
      registry.subscribe(nobody, { channel: 'book', market: marketId(5_000), depth: 10 }),
    );
    expect(book).toMatchObject({ built: 1, forgotten: 0 });
    expect(book.entries).toBeLessThan(50);
    const price = step(() => registry.subscribe(nobody, { channel: 'price', market: marketId(20_000) }));
    expect(price).toMatchObject({ built: 1, forgotten: 0 });
    expect(price.entries).toBeLessThan(50);
    expect([pool.bookMarketCount, pool.priceMarketCount]).toEqual([2_001, 2_001]);

    // Another depth of a book already polled: no target built.
    const depth = step(() => registry.subscribe(nobody, { channel: 'book', market: marketId(7), depth: 10 }));
    expect(depth).toMatchObject({ built: 0, forgotten: 0 });
    expect(depth.entries).toBeLessThan(50);

    // The last stream of a market goes (closed here; after the linger alike): its target only.
    const gone = step(() => {
      registry.closeStreams('book', marketId(3), 'gone');
      registry.closeStreams('price', marketId(10_003), 'gone');
    });
    expect(gone).toMatchObject({ built: 0, forgotten: 2 });
    expect(gone.entries).toBeLessThan(100);
    expect([pool.bookMarketCount, pool.priceMarketCount]).toEqual([2_000, 2_000]);
    // The plan counted what changed: 2,000 books and 20 batches a second asked for.
    expect(pool.freshness().pollsPerSecond.requested).toBe(2_020);
  });

  it('plans with the books this relay polls itself, counted as polls find leases held elsewhere', async () => {
    const { registry, broker, pool } = setup(source(), 1_000, 10);
    // Another relay holds the leases of the first 12 books.
    const elsewhere = new Set(Array.from({ length: 12 }, (_, i) => marketId(i)));
    const claimed = new Set<string>();
    vi.spyOn(broker, 'claim').mockImplementation((key) => {
      const market = [...elsewhere].find((id) => key.includes(id));
      if (market !== undefined) claimed.add(market);
      return Promise.resolve(market === undefined);
    });
    for (let i = 0; i < 18; i++)
      registry.subscribe(nobody, { channel: 'book', market: marketId(i), depth: null });
    // 18 books a second against 90% of 10 rps, before any poll: every book every 2 s.
    expect(pool.intervals.stretch).toBe(2);
    await waitFor('every lease elsewhere found', () => (claimed.size === elsewhere.size ? true : undefined));
    await new Promise((resolve) => setImmediate(resolve));
    // The next change plans for 6 books polled here and one new: 7 a second, within the budget.
    registry.subscribe(nobody, { channel: 'book', market: marketId(18), depth: null });
    expect(pool.intervals.stretch).toBe(1);
    // Dropped books leased elsewhere leave the count of books polled here as it was: 7 + 2 new.
    for (let i = 0; i < 12; i++) registry.closeStreams('book', marketId(i), 'gone');
    for (let i = 19; i < 21; i++)
      registry.subscribe(nobody, { channel: 'book', market: marketId(i), depth: null });
    expect(pool.intervals.stretch).toBe(1);
    registry.subscribe(nobody, { channel: 'book', market: marketId(21), depth: null });
    expect(pool.intervals.stretch).toBeCloseTo(10 / 9);
  });

  it('a price market joins the last batch with room, and one that goes leaves its place to the last market', async () => {
    const priceCalls: string[][] = [];
    const { registry, pool } = setup(source(priceCalls), 10);
    for (let i = 0; i < 250; i++) registry.subscribe(nobody, { channel: 'price', market: marketId(i) });
    /** Each batch as asked next, once all `count` markets were asked for since now. */
    const nextBatches = async (count: number): Promise<string[][]> => {
      priceCalls.length = 0;
      await waitFor(`${count} markets asked for`, () =>
        new Set(priceCalls.flat()).size >= count ? true : undefined,
      );
      const batches = new Map(priceCalls.map((batch) => [batch[0], batch]));
      return [...batches.values()].sort((a, b) => b.length - a.length);
    };
    const cycle = await nextBatches(250);
    expect(cycle.map((batch) => batch.length)).toEqual([100, 100, 50]);
    const middle = cycle.find((batch) => batch.includes(marketId(150)));

    registry.closeStreams('price', marketId(5), 'gone');
    const afterLeave = await nextBatches(249);
    expect(afterLeave.map((batch) => batch.length)).toEqual([100, 100, 49]);
    expect(afterLeave.flat()).not.toContain(marketId(5));
    // The last batch's last market took the place; the middle batch was not cut again.
    expect(afterLeave.find((batch) => batch.includes(marketId(0)))?.[5]).toBe(marketId(249));
    expect(afterLeave.find((batch) => batch.includes(marketId(150)))).toEqual(middle);

    for (let i = 300; i < 352; i++) registry.subscribe(nobody, { channel: 'price', market: marketId(i) });
    const afterJoin = await nextBatches(301);
    expect(afterJoin.map((batch) => batch.length)).toEqual([100, 100, 100, 1]);
    // The last batch filled up (49 + 51), then the 52nd new market started a batch of its own.
    expect(afterJoin.find((batch) => batch.includes(marketId(200)))?.slice(48, 50)).toEqual([
      marketId(248),
      marketId(300),
    ]);
    expect(afterJoin.at(-1)).toEqual([marketId(351)]);
    expect(pool.freshness().pollsPerSecond.requested).toBe(400); // four batches every 10 ms
  });
});
