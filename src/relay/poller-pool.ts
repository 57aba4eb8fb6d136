/**
 * @module relay/poller-pool
 * Polls upstream for exactly what the registry holds: one order book per market with `book`
 * streams (every depth of a market shares that one request), and one batch price request per 100
 * markets with `price` streams. A poll never overlaps the previous poll of the same thing; all
 * requests go through the upstream client's concurrency and rate caps; intervals stretch evenly
 * when the budget cannot cover every market (relay/budget.ts). Freshness (`live` / `stale`) is
 * judged here, per poll target, against `staleAfterFactor` x its effective interval.
 *
 * In cluster mode a target is polled by the relay holding its lease (cluster/coordinator.ts); the
 * others apply the results it shares through the same path as their own polls.
 */

import type { PollCoordinator } from '../cluster/coordinator.ts';
import { parseSharedResult, type SharedResult } from '../cluster/shared-result.ts';
import type { StreamState } from '../protocol/messages.ts';
import { UpstreamHttpError } from '../upstream/errors.ts';
import type { ClobPriceBatchResponse, ClobPriceSnapshot, OrderBook } from '../upstream/schemas.ts';
import { aggregateBook, limitDepth } from './aggregate.ts';
import { type PollIntervals, PRICE_BATCH_SIZE, pollIntervals } from './budget.ts';
import { priceDataOf, withMilliseconds } from './channels.ts';
import type { RelayEvents } from './events.ts';
import type { StreamRegistry } from './registry.ts';
import type { AnyStream } from './stream.ts';

/** The two upstream calls polling needs (the typed client satisfies it; tests may fake it). */
export interface PollSource {
  orderBook(marketId: string): Promise<OrderBook>;
  clobPrices(marketIds: string[]): Promise<ClobPriceBatchResponse>;
}

export interface PollerOptions {
  source: PollSource;
  coordinator: PollCoordinator;
  registry: StreamRegistry;
  events: RelayEvents;
  bookPollMs: number;
  pricePollMs: number;
  upstreamRps: number;
  /** A target is stale after this many effective intervals without a successful poll (protocol: 3). */
  staleAfterFactor: number;
  now?: () => number;
}

/** Per poll target: when it last succeeded, and why it last failed. */
interface TargetHealth {
  since: number;
  lastSuccessAt: number | undefined;
  lastError: string | undefined;
  /**
   * Relay clock of the request behind the newest state applied (when it was asked; for a shared
   * result, when its lease holder received it). A response to an older request is dropped; upstream's
   * own clock is data, never an order, so an absurd timestamp cannot hide later responses.
   */
  askedAt: number;
}

/** A lease outlives a few missed renewals, but not a relay that died, for long. */
const MIN_LEASE_MS = 2_000;
const LEASES_PER_INTERVAL = 3;

interface BookLoop extends TargetHealth {
  timer: NodeJS.Timeout | undefined;
  running: boolean;
  stopped: boolean;
}

export class PollerPool {
  readonly #options: PollerOptions;
  readonly #now: () => number;
  readonly #bookLoops = new Map<string, BookLoop>();
  readonly #priceHealth = new Map<string, TargetHealth>();
  #priceTimer: NodeJS.Timeout | undefined;
  #priceRunning = false;
  /** New price markets arrived during a poll: poll again right after it. */
  #priceWanted = false;
  #sweepTimer: NodeJS.Timeout | undefined;
  #intervals: PollIntervals;
  #stopped = false;

  constructor(options: PollerOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#intervals = {
      bookIntervalMs: options.bookPollMs,
      priceIntervalMs: options.pricePollMs,
      stretch: 1,
    };
  }

  get intervals(): PollIntervals {
    return this.#intervals;
  }

  /** Markets currently polled for books / prices. */
  get bookMarketCount(): number {
    return this.#bookLoops.size;
  }
  get priceMarketCount(): number {
    return this.#priceHealth.size;
  }

  /** Health of each polled target, for the status page and /health. */
  health(): {
    kind: 'book' | 'price';
    market: string;
    lastSuccessAt: number | undefined;
    lastError: string | undefined;
  }[] {
    return [
      ...[...this.#bookLoops].map(([market, loop]) => ({ kind: 'book' as const, market, ...pick(loop) })),
      ...[...this.#priceHealth].map(([market, health]) => ({
        kind: 'price' as const,
        market,
        ...pick(health),
      })),
    ];
  }

  /** Brings the polled set in line with the registry; called on every interest change. */
  sync(): void {
    if (this.#stopped) return;
    const { registry } = this.#options;
    const bookMarkets = registry.bookMarkets();
    for (const [market, loop] of this.#bookLoops) {
      if (!bookMarkets.has(market)) this.#stopBookLoop(market, loop);
    }
    for (const market of bookMarkets.keys()) {
      if (!this.#bookLoops.has(market)) {
        const loop: BookLoop = {
          since: this.#now(),
          lastSuccessAt: undefined,
          lastError: undefined,
          askedAt: -Infinity,
          timer: undefined,
          running: false,
          stopped: false,
        };
        this.#bookLoops.set(market, loop);
        this.#options.coordinator.follow(`book:${market}`, (payload) =>
          this.#onShared('book', market, payload),
        );
        // First poll at once, so a new subscriber's snapshot is one round trip away.
        void this.#pollBook(market, loop);
      }
    }

    const priceMarkets = registry.priceMarkets();
    for (const market of this.#priceHealth.keys()) {
      if (!priceMarkets.has(market)) {
        this.#priceHealth.delete(market);
        this.#forget(`price:${market}`);
      }
    }
    let newPriceMarket = false;
    for (const market of priceMarkets.keys()) {
      if (!this.#priceHealth.has(market)) {
        this.#priceHealth.set(market, {
          since: this.#now(),
          lastSuccessAt: undefined,
          lastError: undefined,
          askedAt: -Infinity,
        });
        this.#options.coordinator.follow(`price:${market}`, (payload) =>
          this.#onShared('price', market, payload),
        );
        newPriceMarket = true;
      }
    }
    if (newPriceMarket) this.#pollPricesSoon();

    this.#intervals = pollIntervals({
      bookMarkets: this.#bookLoops.size,
      priceMarkets: this.#priceHealth.size,
      bookPollMs: this.#options.bookPollMs,
      pricePollMs: this.#options.pricePollMs,
      rps: this.#options.upstreamRps,
    });
    this.#options.events.emit('poll:schedule', {
      bookMarkets: this.#bookLoops.size,
      priceMarkets: this.#priceHealth.size,
      bookIntervalMs: this.#intervals.bookIntervalMs,
      priceIntervalMs: this.#intervals.priceIntervalMs,
    });
    this.#ensureSweep();
  }

  stop(): void {
    this.#stopped = true;
    for (const [market, loop] of this.#bookLoops) this.#stopBookLoop(market, loop);
    for (const market of this.#priceHealth.keys()) this.#forget(`price:${market}`);
    this.#priceHealth.clear();
    clearTimeout(this.#priceTimer);
    clearInterval(this.#sweepTimer);
  }

  #stopBookLoop(market: string, loop: BookLoop): void {
    loop.stopped = true;
    clearTimeout(loop.timer);
    this.#bookLoops.delete(market);
    this.#forget(`book:${market}`);
  }

  /** No subscriber left here: stop following and hand the lease to another interested relay. */
  #forget(target: string): void {
    this.#options.coordinator.unfollow(target);
    void this.#options.coordinator.release(target);
  }

  #leaseMs(intervalMs: number): number {
    return Math.max(MIN_LEASE_MS, LEASES_PER_INTERVAL * intervalMs);
  }

  async #pollBook(market: string, loop: BookLoop): Promise<void> {
    if (loop.running || loop.stopped) return;
    loop.running = true;
    const started = this.#now();
    const target = `book:${market}`;
    try {
      const owner = await this.#options.coordinator.claim(
        target,
        this.#leaseMs(this.#intervals.bookIntervalMs),
      );
      if (!owner || loop.stopped) return; // another relay polls it and shares the result
      const book = await this.#options.source.orderBook(market);
      if (loop.stopped) return;
      const receivedAt = this.#now();
      this.#applyBook(market, book, started, receivedAt);
      this.#options.coordinator.share(target, JSON.stringify({ kind: 'book', receivedAt, book }));
      this.#emitPoll('book', 1, 'ok', started);
    } catch (error) {
      if (loop.stopped) return;
      if (error instanceof UpstreamHttpError && error.status === 404) {
        this.#emitPoll('book', 1, 'not_found', started, error);
        this.#options.coordinator.share(target, JSON.stringify({ kind: 'not_found' }));
        this.#closeMarket('book', market);
        return;
      }
      loop.lastError = describe(error);
      this.#emitPoll('book', 1, 'error', started, error);
      this.#judgeFreshness();
    } finally {
      loop.running = false;
      if (!loop.stopped && !this.#stopped) {
        const wait = Math.max(0, started + this.#intervals.bookIntervalMs - this.#now());
        loop.timer = setTimeout(() => void this.#pollBook(market, loop), wait);
      }
    }
  }

  #applyBook(market: string, book: OrderBook, askedAt: number, receivedAt: number): void {
    const loop = this.#bookLoops.get(market);
    if (loop === undefined || askedAt < loop.askedAt) return;
    loop.askedAt = askedAt;
    const rts = new Date(receivedAt).toISOString();
    const ts = withMilliseconds(book.timestamp);
    const full = aggregateBook(book);
    for (const stream of this.#options.registry.bookMarkets().get(market) ?? []) {
      this.#publish(stream, limitDepth(full, stream.depth ?? null), ts, rts, receivedAt);
    }
    loop.lastSuccessAt = this.#now();
    loop.lastError = undefined;
  }

  #applyPrice(entry: ClobPriceSnapshot, askedAt: number, receivedAt: number): void {
    const health = this.#priceHealth.get(entry.market_id);
    const stream = this.#options.registry.priceMarkets().get(entry.market_id);
    if (health === undefined || stream === undefined || askedAt < health.askedAt) return;
    health.askedAt = askedAt;
    const rts = new Date(receivedAt).toISOString();
    this.#publish(stream, priceDataOf(entry), withMilliseconds(entry.timestamp), rts, receivedAt);
    health.lastSuccessAt = this.#now();
    health.lastError = undefined;
  }

  /** A result the lease holder shared: applied exactly like one of our own polls. */
  #onShared(kind: 'book' | 'price', market: string, payload: string): void {
    const result: SharedResult | undefined = parseSharedResult(payload);
    if (result === undefined || this.#stopped) return;
    if (result.kind === 'not_found') this.#closeMarket(kind, market);
    else if (result.kind === 'book' && kind === 'book' && result.book.market_id === market) {
      this.#applyBook(market, result.book, result.receivedAt, result.receivedAt);
    } else if (result.kind === 'price' && kind === 'price' && result.entry.market_id === market) {
      this.#applyPrice(result.entry, result.receivedAt, result.receivedAt);
    }
  }

  /**
   * A new price market gets its first state without waiting an interval. The poll runs on the
   * next turn of the event loop so that the markets of one subscribe request share one batch; if
   * a poll is already in flight, another follows as soon as it ends.
   */
  #pollPricesSoon(): void {
    if (this.#priceRunning) {
      this.#priceWanted = true;
      return;
    }
    clearTimeout(this.#priceTimer);
    this.#priceTimer = setTimeout(() => void this.#pollPrices(), 0);
  }

  async #pollPrices(): Promise<void> {
    if (this.#priceRunning || this.#stopped) return;
    const wanted = [...this.#priceHealth.keys()];
    if (wanted.length === 0) return;
    this.#priceRunning = true;
    const started = this.#now();
    const leaseMs = this.#leaseMs(this.#intervals.priceIntervalMs);
    const claims = await Promise.all(
      wanted.map((market) => this.#options.coordinator.claim(`price:${market}`, leaseMs)),
    );
    const markets = wanted.filter((market, i) => claims[i] && this.#priceHealth.has(market));
    const batches: string[][] = [];
    for (let i = 0; i < markets.length; i += PRICE_BATCH_SIZE)
      batches.push(markets.slice(i, i + PRICE_BATCH_SIZE));
    await Promise.all(batches.map((batch) => this.#pollPriceBatch(batch)));
    this.#priceRunning = false;
    if (!this.#stopped && this.#priceHealth.size > 0) {
      const wanted = this.#priceWanted;
      this.#priceWanted = false;
      const wait = wanted ? 0 : Math.max(0, started + this.#intervals.priceIntervalMs - this.#now());
      this.#priceTimer = setTimeout(() => void this.#pollPrices(), wait);
    }
  }

  async #pollPriceBatch(batch: string[]): Promise<void> {
    const started = this.#now();
    try {
      const response = await this.#options.source.clobPrices(batch);
      const receivedAt = this.#now();
      const answered = new Set<string>();
      for (const entry of response.data) {
        if (!this.#priceHealth.has(entry.market_id)) continue;
        answered.add(entry.market_id);
        this.#applyPrice(entry, started, receivedAt);
        this.#options.coordinator.share(
          `price:${entry.market_id}`,
          JSON.stringify({ kind: 'price', receivedAt, entry }),
        );
      }
      this.#emitPoll('price', batch.length, 'ok', started);
      // A market the batch does not answer for does not exist upstream (docs/upstream.md).
      for (const market of batch) {
        if (!answered.has(market) && this.#priceHealth.has(market)) {
          this.#options.coordinator.share(`price:${market}`, JSON.stringify({ kind: 'not_found' }));
          this.#closeMarket('price', market);
        }
      }
    } catch (error) {
      const reason = describe(error);
      for (const market of batch) {
        const health = this.#priceHealth.get(market);
        if (health !== undefined) health.lastError = reason;
      }
      this.#emitPoll('price', batch.length, 'error', started, error);
      this.#judgeFreshness();
    }
  }

  #closeMarket(kind: 'book' | 'price', market: string): void {
    const reason = 'market not found upstream';
    for (const stream of this.#options.registry.closeMarket(kind, market, reason)) {
      this.#emitState(stream, 'closed', reason);
    }
  }

  #publish(stream: AnyStream, state: unknown, ts: string, rts: string, receivedAt: number): void {
    const { frame } = stream.publish(state, ts, rts, receivedAt);
    if (stream.freshness === 'stale' && stream.setFreshness('live')) this.#emitState(stream, 'live');
    if (frame !== null && stream.subscribers.size > 0) {
      this.#options.events.emit('stream:sent', {
        channel: stream.channel,
        kind: stream.seq === 1 ? 'snapshot' : 'update',
        subscribers: stream.subscribers.size,
        bytes: frame.wire.length,
        sinceReceiptMs: this.#now() - receivedAt,
      });
    }
  }

  /** Marks stale every stream whose target has not succeeded for staleAfterFactor x its interval. */
  #judgeFreshness(): void {
    const now = this.#now();
    const { registry, staleAfterFactor } = this.#options;
    const bookLimit = staleAfterFactor * this.#intervals.bookIntervalMs;
    for (const [market, loop] of this.#bookLoops) {
      if (now - (loop.lastSuccessAt ?? loop.since) <= bookLimit) continue;
      for (const stream of registry.bookMarkets().get(market) ?? []) {
        this.#markStale(stream, loop);
      }
    }
    const priceLimit = staleAfterFactor * this.#intervals.priceIntervalMs;
    for (const [market, health] of this.#priceHealth) {
      if (now - (health.lastSuccessAt ?? health.since) <= priceLimit) continue;
      const stream = registry.priceMarkets().get(market);
      if (stream !== undefined) this.#markStale(stream, health);
    }
  }

  #markStale(stream: AnyStream, health: TargetHealth): void {
    const reason = health.lastError ?? 'no upstream response';
    if (stream.setFreshness('stale', reason)) this.#emitState(stream, 'stale', reason);
  }

  /** Staleness must be noticed even when polls hang, so it is also judged on a timer. */
  #ensureSweep(): void {
    if (this.#sweepTimer !== undefined) return;
    const every = Math.max(50, Math.min(this.#options.bookPollMs, this.#options.pricePollMs) / 2);
    this.#sweepTimer = setInterval(() => this.#judgeFreshness(), every);
    this.#sweepTimer.unref();
  }

  #emitState(stream: AnyStream, state: StreamState, reason?: string): void {
    this.#options.events.emit('stream:state', {
      channel: stream.channel,
      market: stream.market,
      ...(stream.channel === 'book' ? { depth: stream.depth ?? null } : {}),
      state,
      ...(reason === undefined ? {} : { reason }),
    });
  }

  #emitPoll(
    kind: 'book' | 'price',
    markets: number,
    outcome: 'ok' | 'error' | 'not_found',
    started: number,
    error?: unknown,
  ): void {
    this.#options.events.emit('poll:done', {
      kind,
      markets,
      outcome,
      durationMs: this.#now() - started,
      ...(error instanceof Error ? { error } : {}),
    });
  }
}

function pick(health: TargetHealth): { lastSuccessAt: number | undefined; lastError: string | undefined } {
  return { lastSuccessAt: health.lastSuccessAt, lastError: health.lastError };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
