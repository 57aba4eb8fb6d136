/**
 * The poller pool against a scripted upstream: what it asks for, how often, and never twice at once.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { pollTargets } from '../../../src/poll-targets.ts';
import { KnownMarkets } from '../../../src/relay/admission/known-markets.ts';
import { LocalBroker } from '../../../src/relay/coordination/local/broker.ts';
import { RelayEvents } from '../../../src/relay/events.ts';
import { type ExistenceJudge, NotFoundJudge } from '../../../src/relay/poll/not-found.ts';
import { PollerPool, type PollSource } from '../../../src/relay/poll/poller-pool.ts';
import type { SchedulerMode } from '../../../src/relay/poll/scheduler.ts';
import type { Frame } from '../../../src/relay/streams/frame.ts';
import { StreamRegistry } from '../../../src/relay/streams/registry.ts';
import type { AnyStream, StreamSubscriber } from '../../../src/relay/streams/stream.ts';
import type {
  ClobPriceBatchResponse,
  MarketActivityResponse,
  MarketResponse,
  MarketsResponse,
  OrderBook,
  ProbabilitiesResponse,
  TokenPriceResponse,
} from '../../../src/upstream/schemas.ts';
import { waitFor } from '../../support/wait-for.ts';

const marketId = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;

/** An upstream whose answers the test releases by hand. */
class ScriptedSource implements PollSource {
  readonly bookCalls: string[] = [];
  readonly priceCalls: string[][] = [];
  readonly pending: (() => void)[] = [];
  inFlight = 0;
  maxInFlightPerMarket = 0;
  readonly #inFlightByMarket = new Map<string, number>();

  orderBook(market: string): Promise<OrderBook> {
    this.bookCalls.push(market);
    const now = (this.#inFlightByMarket.get(market) ?? 0) + 1;
    this.#inFlightByMarket.set(market, now);
    this.maxInFlightPerMarket = Math.max(this.maxInFlightPerMarket, now);
    return new Promise((resolve) => {
      this.pending.push(() => {
        this.#inFlightByMarket.set(market, (this.#inFlightByMarket.get(market) ?? 1) - 1);
        resolve({
          market_id: market,
          bids: [],
          asks: [],
          last_price: '0.50000000',
          timestamp: new Date().toISOString(),
        });
      });
    });
  }

  clobPrices(markets: string[]): Promise<ClobPriceBatchResponse> {
    this.priceCalls.push(markets);
    const timestamp = new Date().toISOString();
    return Promise.resolve({
      data: markets.map((market_id) => ({ market_id, best_bid: '0.40000000', timestamp })),
    });
  }

  probabilityCalls = 0;

  probabilities(): Promise<ProbabilitiesResponse> {
    this.probabilityCalls += 1;
    return Promise.resolve({ success: true, probabilities: {} });
  }

  market(): Promise<MarketResponse> {
    return Promise.reject(new Error('not scripted'));
  }

  markets(): Promise<MarketsResponse> {
    return Promise.reject(new Error('not scripted'));
  }

  publicBody(): Promise<unknown> {
    return Promise.reject(new Error('not scripted'));
  }

  tokenPrice(): Promise<TokenPriceResponse> {
    return Promise.reject(new Error('not scripted'));
  }

  marketActivity(): Promise<MarketActivityResponse> {
    return Promise.reject(new Error('not scripted'));
  }

  releaseAll(): void {
    for (const release of this.pending.splice(0)) release();
  }
}

const nobody: StreamSubscriber = {
  deliver(_stream: AnyStream, _frame: Frame) {},
  notify() {},
  ended() {},
};

describe('PollerPool', () => {
  let poller: PollerPool | undefined;
  afterEach(() => {
    poller?.stop();
    vi.useRealTimers();
  });

  function setup(
    source: PollSource,
    {
      rps = 1000,
      bookPollMs = 10,
      pricePollMs = 10,
      lingerMs = 10,
      scheduler = 'freshness' as SchedulerMode,
      shareOwner = undefined as ((subscriber: StreamSubscriber) => unknown) | undefined,
      budgetShare = undefined as (() => number | undefined) | undefined,
      existence = undefined as ExistenceJudge | undefined,
    } = {},
  ) {
    const registry: StreamRegistry = new StreamRegistry({
      lingerMs,
      resumeBufferSize: 10,
    });
    const events = new RelayEvents();
    poller = new PollerPool({
      targets: pollTargets,
      source,
      // A cluster's broker says this relay's share of the budget; a relay alone's says none.
      broker:
        budgetShare === undefined ? new LocalBroker() : Object.assign(new LocalBroker(), { budgetShare }),
      registry,
      events,
      bookPollMs,
      pricePollMs,
      upstreamRps: rps,
      concurrency: 16,
      scheduler,
      maxAgeMs: 30_000,
      staleAfterFactor: 3,
      ...(shareOwner === undefined ? {} : { shareOwner }),
      ...(existence === undefined ? {} : { existence }),
    });
    return { registry, poller, events };
  }

  it("plans with the relay's share of the cluster budget, and again when the share moves", async () => {
    const source = new ScriptedSource();
    let share: number | undefined;
    const { registry, poller: pool } = setup(source, { rps: 100, budgetShare: () => share });
    registry.subscribe(nobody, { channel: 'book', market: marketId(1), depth: null });
    expect(pool.freshness().pollsPerSecond.budget).toBeCloseTo(90); // no share known yet: the whole budget
    share = 0.25;
    await waitFor('a plan with a quarter of the budget', () => pool.freshness().pollsPerSecond.budget < 30);
    expect(pool.freshness().pollsPerSecond.budget).toBeCloseTo(22.5);
    share = 0.01; // peers spend it all: still a tenth, to learn a larger share
    await waitFor('the floor', () => pool.freshness().pollsPerSecond.budget < 20);
    expect(pool.freshness().pollsPerSecond.budget).toBeCloseTo(9);
    source.releaseAll();
  });

  it('never polls the same book twice at once, however slow upstream is', async () => {
    vi.useFakeTimers();
    const source = new ScriptedSource();
    const { registry } = setup(source);
    registry.subscribe(nobody, { channel: 'book', market: marketId(1), depth: null });
    registry.subscribe(nobody, { channel: 'book', market: marketId(1), depth: 10 });
    await vi.advanceTimersByTimeAsync(0);
    expect(source.bookCalls).toHaveLength(1); // one request serves every depth of a market
    await vi.advanceTimersByTimeAsync(100); // ten intervals while the poll hangs
    expect(source.bookCalls).toHaveLength(1);
    source.releaseAll();
    await vi.advanceTimersByTimeAsync(10);
    expect(source.bookCalls).toHaveLength(2);
    source.releaseAll();
    await vi.advanceTimersByTimeAsync(10);
    expect(source.bookCalls).toHaveLength(3);
    expect(source.maxInFlightPerMarket).toBe(1);
  });

  it('asks prices in batches of at most 100 markets, each market once', async () => {
    const source = new ScriptedSource();
    const { registry } = setup(source);
    for (let i = 0; i < 250; i++) registry.subscribe(nobody, { channel: 'price', market: marketId(i) });
    await waitFor('a full price cycle', () => (source.priceCalls.flat().length >= 250 ? true : undefined));
    const firstCycle = source.priceCalls.slice(0, 3);
    expect(firstCycle.map((batch) => batch.length)).toEqual([100, 100, 50]);
    expect(new Set(firstCycle.flat()).size).toBe(250);
    expect(source.bookCalls).toEqual([]);
  });

  it('stretches the intervals evenly when the request budget is short, and says so', () => {
    const source = new ScriptedSource();
    const { registry, poller } = setup(source, { rps: 10, bookPollMs: 1000, pricePollMs: 1000 });
    for (let i = 0; i < 18; i++) registry.subscribe(nobody, { channel: 'book', market: marketId(i) });
    // 18 books/s against 90% of 10 rps: every market every 2 s instead of 1 s.
    expect(poller.intervals).toEqual({ bookIntervalMs: 2000, priceIntervalMs: 2000, stretch: 2 });
    expect(poller.bookMarketCount).toBe(18);
  });

  it('reads the change hints from the polls of the probabilities stream instead of asking twice', async () => {
    vi.useFakeTimers();
    const source = new ScriptedSource();
    const { registry, events } = setup(source, { rps: 10, bookPollMs: 1000, pricePollMs: 1000 });
    for (let i = 0; i < 18; i++) registry.subscribe(nobody, { channel: 'book', market: marketId(i) });
    const run = async (ms: number) => {
      for (let at = 0; at < ms; at += 250) {
        source.releaseAll();
        await vi.advanceTimersByTimeAsync(250);
      }
    };
    // The budget is short: the hint map is worth its own request.
    await run(3_000);
    expect(source.probabilityCalls).toBeGreaterThan(0);

    registry.subscribe(nobody, { channel: 'probabilities', market: 'all' });
    await run(250);
    let streamPolls = 0;
    events.on('poll:done', ({ kind }) => {
      if (kind === 'probabilities') streamPolls += 1;
    });
    source.probabilityCalls = 0;
    await run(6_000);
    expect(streamPolls).toBeGreaterThan(0);
    // Every request for the map is the stream's own: the hints read it from there.
    expect(source.probabilityCalls).toBe(streamPolls);
  });

  it('a market new upstream without prices waits for a catalogue read after its stream began', async () => {
    // Every entry bare: what upstream answers for a market without price data, and may for no market.
    const bare = new (class extends ScriptedSource {
      override clobPrices(markets: string[]): Promise<ClobPriceBatchResponse> {
        this.priceCalls.push(markets);
        const timestamp = new Date().toISOString();
        return Promise.resolve({ data: markets.map((market_id) => ({ market_id, timestamp })) });
      }
    })();
    let listed = [marketId(1)];
    const catalogue = new KnownMarkets({
      markets: () =>
        Promise.resolve({
          markets: listed.map((market_id) => ({ market_id })),
          pagination: { hasMore: false },
        } as unknown as MarketsResponse),
    });
    await catalogue.refresh();
    const upstream = { verified: true, answers: () => true, serviceAnswers: () => true };
    const { registry } = setup(bare, { existence: new NotFoundJudge(upstream, catalogue) });
    const ended: AnyStream[] = [];
    const subscriber: StreamSubscriber = { deliver() {}, notify() {}, ended: (stream) => ended.push(stream) };
    // Upstream lists a new market after the catalogue was read; a random id is subscribed too.
    listed = [marketId(1), marketId(2)];
    const fresh = registry.subscribe(subscriber, { channel: 'price', market: marketId(2) });
    const bogus = registry.subscribe(subscriber, { channel: 'price', market: marketId(3) });
    await waitFor('twenty polls of both', () => (bare.priceCalls.length >= 20 ? true : undefined));
    // Neither is judged by a list that may predate it: not ended, not priced, not stale.
    expect(ended).toEqual([]);
    expect([fresh.hasState, bogus.hasState]).toEqual([false, false]);
    expect([fresh.freshness, bogus.freshness]).toEqual(['live', 'live']);
    // A load begun after the streams did decides: a market without price data, and no market.
    await catalogue.refresh();
    await waitFor('the new market priced', () => (fresh.hasState ? true : undefined));
    await waitFor('the random id ended', () => (ended.includes(bogus) ? true : undefined));
    expect(ended).toEqual([bogus]);
  });

  it('stops polling a market when its last stream goes, after the linger', async () => {
    vi.useFakeTimers();
    const source = new ScriptedSource();
    const { registry, poller } = setup(source, { lingerMs: 25 });
    const stream = registry.subscribe(nobody, { channel: 'book', market: marketId(7), depth: null });
    await vi.advanceTimersByTimeAsync(0);
    expect(source.bookCalls).toHaveLength(1);
    registry.unsubscribe(nobody, stream);
    source.releaseAll();
    await vi.advanceTimersByTimeAsync(10);
    // Lingering: still polled, so a client that reconnects now can resume without a gap.
    expect(source.bookCalls).toHaveLength(2);
    expect(poller.bookMarketCount).toBe(1);
    source.releaseAll();
    await vi.advanceTimersByTimeAsync(15); // the linger ends
    expect(poller.bookMarketCount).toBe(0);
    const calls = source.bookCalls.length;
    source.releaseAll();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(source.bookCalls).toHaveLength(calls);
  });

  it('gives the connections of one API key one share of a short budget, not one each', async () => {
    /** Polls per market, answered at once with the same book. */
    const polls = new Map<string, number>();
    const instant = new (class extends ScriptedSource {
      override orderBook(market: string): Promise<OrderBook> {
        polls.set(market, (polls.get(market) ?? 0) + 1);
        return Promise.resolve({
          market_id: market,
          bids: [],
          asks: [],
          last_price: '0.50000000',
          timestamp: '2025-01-01T00:00:00.000Z',
        });
      }
    })();
    const subscriber = (): StreamSubscriber => ({ deliver() {}, notify() {}, ended() {} });
    // Two connections of key K with five markets each that nobody else wants; one connection
    // without a key with one market. Per connection, K would weigh 2 against 1; per key, 1 against 1.
    const run = async (byKey: boolean): Promise<number> => {
      polls.clear();
      vi.useFakeTimers();
      const [a, b, c] = [subscriber(), subscriber(), subscriber()];
      const keys = new Map<StreamSubscriber, string>([
        [a, 'K'],
        [b, 'K'],
      ]);
      const { registry } = setup(instant, {
        rps: 10,
        scheduler: 'round-robin',
        shareOwner: byKey ? (s) => keys.get(s) ?? s : undefined,
      });
      for (let i = 0; i < 10; i++)
        registry.subscribe(i < 5 ? a : b, { channel: 'book', market: marketId(i), depth: null });
      registry.subscribe(c, { channel: 'book', market: marketId(99), depth: null });
      await vi.advanceTimersByTimeAsync(60_000);
      poller?.stop();
      vi.useRealTimers();
      const keyPolls = Array.from({ length: 10 }, (_, i) => polls.get(marketId(i)) ?? 0);
      expect(Math.min(...keyPolls)).toBeGreaterThan(0);
      return (polls.get(marketId(99)) ?? 0) / (keyPolls.reduce((sum, n) => sum + n, 0) / keyPolls.length);
    };
    // Round-robin asks each book about in proportion to its weight: the lone connection's market
    // weighs 1; each of K's weighs 1/10 per key (1/5 per connection).
    const perKey = await run(true);
    const perConnection = await run(false);
    expect(perKey).toBeGreaterThan(8);
    expect(perConnection).toBeGreaterThan(4);
    expect(perConnection).toBeLessThan(6.5);
  });
});
