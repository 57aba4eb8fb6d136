/**
 * @module relay/targets/poller-pool
 * Polls upstream for exactly what the registry holds: one order-book target per market with `book`
 * or `orders` streams (every depth and both channels share it), one price-batch target per 100
 * markets with `price` streams (relay/targets/price-targets.ts), one target per stream id of the channels polled one request each
 * (relay/targets/stream-targets.ts: market records, the probabilities map, oracle feeds) and, when the
 * budget is short, the change-hint map. The pool keeps those targets in line with the
 * registry and the fair-share weights current; the dispatcher (relay/poll/dispatcher.ts) decides
 * what is asked when, within `--upstream-rps`; freshness (relay/poll/freshness.ts) is judged per target.
 *
 * In cluster mode a target is polled by the relay holding its lease (relay/cluster/share.ts); the
 * others apply the results it shares through the same path as their own polls.
 */

import type { PollCoordinator } from '../../cluster/coordinator.ts';
import type { Channel } from '../../protocol/messages.ts';
import { ClusterShare } from '../cluster/share.ts';
import type { PollKind, RelayEvents } from '../events.ts';
import { PlannedBudget, type PollIntervals, pollIntervals } from '../poll/budget.ts';
import { type OneOffBudget, PollDispatcher } from '../poll/dispatcher.ts';
import { type FreshnessReport, meanOf, staleReason } from '../poll/freshness.ts';
import { deadlineSlackMs, type SchedulerMode, type TargetTiming } from '../poll/scheduler.ts';
import { StreamPublisher } from '../streams/publisher.ts';
import type { StreamRegistry } from '../streams/registry.ts';
import type { StreamSubscriber } from '../streams/stream.ts';
import { BookTarget } from './book-target.ts';
import { bookTargetStreams, bookWeights } from './book-weights.ts';
import { ChangeHints, ChangeHintTarget } from './change-hints.ts';
import { type ExistenceJudge, trustingJudge } from './not-found.ts';
import type { PollContext, PollSource } from './poll-target.ts';
import { PriceTargets } from './price-targets.ts';
import { StreamTargets } from './stream-targets.ts';

export type { PollSource } from './poll-target.ts';

export interface PollerOptions {
  source: PollSource;
  coordinator: PollCoordinator;
  registry: StreamRegistry;
  events: RelayEvents;
  /** A book is never asked for more often than this (ms). */
  bookPollMs: number;
  pricePollMs: number;
  /** Every stream is confirmed at least this often while the budget allows (ms). */
  maxAgeMs: number;
  upstreamRps: number;
  /** Requests in flight at most (`--upstream-concurrency`). */
  concurrency: number;
  scheduler: SchedulerMode;
  /** A target is stale after this many of its intervals without a successful poll (protocol: 3). */
  staleAfterFactor: number;
  /**
   * How long one upstream request may take before it failed (`--upstream-timeout-ms`, default 5000):
   * until then a request under way keeps its target from going stale (relay/poll/freshness.ts).
   */
  requestTimeoutMs?: number;
  /**
   * Whether a failed poll means upstream does not have the id, judged from upstream's identity,
   * the paths that answer and the catalogue (relay/targets/not-found.ts); default: every refused id.
   */
  existence?: ExistenceJudge;
  /** Who a subscriber counts as in the fair share: its API key, or (default) itself. */
  shareOwner?: (subscriber: StreamSubscriber) => unknown;
  /** Cluster mode: the shortest lease on a poll target (ms); a dead holder's targets wait this long. */
  minLeaseMs?: number;
  /**
   * Cluster mode: this relay's share of the cluster's budget (0..1, undefined until known). The
   * poller plans with that share of `upstreamRps`, for the targets whose lease it holds.
   */
  budgetShare?: () => number | undefined;
  /** Upstream requests that are not polls (the REST front's), in the same budget; none without it. */
  oneOffs?: OneOffBudget;
  now?: () => number;
}

/** Keeps a tenth of the budget free for retries and one-off requests (status page, catalogue). */
const POLLING_SHARE = 0.9;
/** The hint map lists every market: worth asking for about once a second, not more. */
const HINTS_MIN_INTERVAL_MS = 1_000;
/** Fair-share weights follow subscriptions at least this often (ms) while the budget is short. */
const WEIGHTS_EVERY_MS = 250;

export class PollerPool {
  readonly #options: PollerOptions;
  readonly #now: () => number;
  readonly #context: PollContext;
  readonly #dispatcher: PollDispatcher;
  readonly #books = new Map<string, BookTarget>();
  readonly #prices: PriceTargets;
  readonly #streamTargets: StreamTargets;
  /** The hints, while worth reading; their own request only while no probabilities stream reads the map. */
  #hints: ChangeHints | undefined;
  #hintTarget: ChangeHintTarget | undefined;
  #sweepTimer: NodeJS.Timeout | undefined;
  #intervals: PollIntervals;
  #weightsAt = Number.NEGATIVE_INFINITY;
  readonly #budget: PlannedBudget;
  #stopped = false;

  constructor(options: PollerOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#budget = new PlannedBudget(options.upstreamRps, options.budgetShare);
    this.#intervals = {
      bookIntervalMs: options.bookPollMs,
      priceIntervalMs: options.pricePollMs,
      stretch: 1,
    };
    this.#context = {
      source: options.source,
      cluster: new ClusterShare(options.coordinator, options.minLeaseMs),
      publisher: new StreamPublisher(options.events, this.#now),
      registry: options.registry,
      events: options.events,
      now: this.#now,
      existence: options.existence ?? trustingJudge,
      closeMarket: (kind, market) => this.#closeMarket(kind, market),
      endStreams: (kind, id, reason) => this.#endStreams(kind, id, reason),
      hintBook: (market, askedAt, movedAt) => this.#hintBook(market, askedAt, movedAt),
      coverBook: (market, askedAt) => {
        const book = this.#books.get(market);
        if (book !== undefined) book.coveredAt = askedAt;
      },
      judgeFreshness: () => this.#judgeFreshness(),
      probabilitiesRead: (response, askedAt) => this.#hints?.read(response, askedAt),
    };
    this.#dispatcher = new PollDispatcher({
      ratePerSecond: options.upstreamRps * POLLING_SHARE,
      concurrency: options.concurrency,
      mode: options.scheduler,
      turnMs: Math.min(25, Math.max(2, Math.min(options.bookPollMs, options.pricePollMs) / 4)),
      now: this.#now,
      beforeTurn: () => this.#refreshWeights(),
      ...(options.oneOffs === undefined ? {} : { oneOffs: options.oneOffs }),
    });
    this.#prices = new PriceTargets(this.#context, this.#dispatcher);
    this.#streamTargets = new StreamTargets(this.#context, this.#dispatcher);
  }

  /**
   * Runs `work`, one upstream request that is not a poll, in a slot of the polling budget
   * (relay/poll/dispatcher.ts): rejects with OneOffRefusedError when too many already wait, and
   * with the signal's reason when it aborts before its start.
   */
  runOneOff<T>(work: () => Promise<T>, signal: AbortSignal): Promise<T> {
    return this.#dispatcher.runOneOff(work, signal);
  }

  /** What the configured intervals would cost against the budget (the requested polling rate). */
  /** Upstream answered a 429: the budget's rate is cut and held (relay/poll/dispatcher.ts). */
  rateLimited(retryAfterMs: number | undefined): void {
    this.#dispatcher.rateLimited(retryAfterMs);
  }

  /** Requests per second kept to after upstream's 429s; undefined while not lowered. */
  get rateLimitRps(): number | undefined {
    return this.#dispatcher.limitRps;
  }

  get intervals(): PollIntervals {
    return this.#intervals;
  }

  get bookMarketCount(): number {
    return this.#books.size;
  }
  get priceMarketCount(): number {
    return this.#prices.marketCount;
  }

  /** Targets polled for `channel` (`orders` shares the book's targets; `price` counts markets). */
  targetCount(channel: Channel): number {
    if (channel === 'book' || channel === 'orders') return this.#books.size;
    if (channel === 'price') return this.#prices.marketCount;
    return this.#streamTargets.countOf(channel);
  }

  /** How often a stream of `channel` is asked for now, at most (the stretched interval). */
  intervalOf(channel: Channel): number {
    if (channel === 'book' || channel === 'orders') return this.#intervals.bookIntervalMs;
    if (channel === 'price') return this.#intervals.priceIntervalMs;
    return this.#streamTiming().minIntervalMs;
  }

  freshness(now = this.#now()): FreshnessReport {
    const { maxAgeMs, bookPollMs, pricePollMs } = this.#options;
    let oldestAgeMs = 0;
    for (const book of this.#books.values())
      oldestAgeMs = Math.max(oldestAgeMs, now - (book.confirmedAt ?? book.addedAt));
    for (const price of this.#prices.markets())
      oldestAgeMs = Math.max(oldestAgeMs, now - (price.confirmedAt ?? price.addedAt));
    for (const target of this.#streamTargets.values())
      oldestAgeMs = Math.max(oldestAgeMs, now - (target.confirmedAt ?? target.addedAt));
    const budget = this.#budget.rps * POLLING_SHARE;
    const batches = this.#prices.batchCount;
    // The least the maximum age costs: every book once per (max age - slack), every batch at its interval.
    const leastForMaxAge =
      (this.#books.size * 1000) / (maxAgeMs - deadlineSlackMs(this.#bookTiming())) +
      (batches * 1000) / this.#intervals.priceIntervalMs +
      (this.#streamTargets.size * 1000) / this.#streamTiming().maxAgeMs;
    return {
      maxAgeMs,
      oldestAgeMs,
      maxAgeKept: oldestAgeMs <= maxAgeMs && leastForMaxAge <= budget,
      pollsPerSecond: {
        requested:
          (this.#books.size * 1000) / bookPollMs +
          (batches * 1000) / pricePollMs +
          (this.#streamTargets.size * 1000) / pricePollMs,
        budget,
        achieved: this.#dispatcher.achievedPerSecond(),
      },
      effectiveIntervalMs: {
        book: meanOf([...this.#books.values()].map((book) => book.meanAskGapMs)),
        price: meanOf(this.#prices.meanAskGaps()),
      },
    };
  }

  /** Brings the polled set in line with the registry; called on every interest change. */
  sync(): void {
    if (this.#stopped) return;
    this.#syncBooks();
    this.#prices.sync(this.#priceTiming(), (kind, market) => this.#closeMarket(kind, market));
    // Created (or dropped) first, at the current stretch: the budget counts them.
    this.#streamTargets.sync(this.#streamTiming());
    this.#plan();
    this.#dispatcher.start();
    this.#dispatcher.kick();
    this.#ensureSweep();
  }

  /** How often each target can be asked within the budget this relay plans with. */
  #plan(): void {
    let polledBooks = 0;
    for (const book of this.#books.values()) if (!book.followed) polledBooks += 1;
    this.#intervals = pollIntervals({
      bookMarkets: polledBooks,
      priceMarkets: this.#prices.marketCount,
      bookPollMs: this.#options.bookPollMs,
      pricePollMs: this.#options.pricePollMs,
      otherRequestsPerSecond: (this.#streamTargets.size * 1000) / this.#options.pricePollMs,
      rps: this.#budget.rps,
    });
    this.#prices.retime(this.#priceTiming());
    this.#streamTargets.sync(this.#streamTiming()); // retimed at the new stretch
    this.#syncHints();
    this.#weightsAt = Number.NEGATIVE_INFINITY;
    this.#options.events.emit('poll:schedule', {
      bookMarkets: this.#books.size,
      priceMarkets: this.#prices.marketCount,
      bookIntervalMs: this.#intervals.bookIntervalMs,
      priceIntervalMs: this.#intervals.priceIntervalMs,
    });
  }

  /** Cluster mode: plans again when this relay's share of the budget moved. */
  #followShare(): void {
    if (!this.#budget.update()) return;
    this.#dispatcher.setRate(this.#budget.rps * POLLING_SHARE);
    this.#plan();
  }

  stop(): void {
    this.#stopped = true;
    this.#dispatcher.stop();
    for (const book of this.#books.values()) this.#dropTarget(book);
    this.#prices.clear();
    this.#streamTargets.clear();
    this.#books.clear();
    clearInterval(this.#sweepTimer);
  }

  #bookTiming(): TargetTiming {
    return { minIntervalMs: this.#options.bookPollMs, maxAgeMs: this.#options.maxAgeMs };
  }

  /** Price batches are cheap (100 markets a request): asked at their (stretched) interval. */
  #priceTiming(): TargetTiming {
    const interval = this.#intervals.priceIntervalMs;
    return { minIntervalMs: interval, maxAgeMs: interval };
  }

  /**
   * The other channels' targets are asked at most every `--price-poll-ms` (one cheap request each),
   * stretched with every other interval when the budget is short, and confirmed within the maximum
   * age while the budget allows.
   */
  #streamTiming(): TargetTiming {
    const interval = Math.ceil(this.#options.pricePollMs * this.#intervals.stretch);
    return { minIntervalMs: interval, maxAgeMs: Math.max(interval, this.#options.maxAgeMs) };
  }

  #syncBooks(): void {
    const { registry } = this.#options;
    // One order-book request serves a market's `book` streams and its `orders` stream.
    const wanted = new Set([...registry.ids('book').keys(), ...registry.ids('orders').keys()]);
    for (const [market, book] of this.#books) {
      if (wanted.has(market)) continue;
      this.#books.delete(market);
      this.#dropTarget(book);
    }
    for (const market of wanted) {
      if (this.#books.has(market)) continue;
      const book = new BookTarget(market, this.#bookTiming(), this.#context);
      this.#books.set(market, book);
      this.#dispatcher.add(book);
    }
  }

  /**
   * The hint map is worth reading only while the budget cannot poll every book at its minimum; it
   * costs a request of its own only while no `probabilities` stream asks for the same map.
   */
  #syncHints(): void {
    const wanted =
      this.#options.scheduler === 'freshness' && this.#intervals.stretch > 1 && this.#books.size > 0;
    if (wanted) this.#hints ??= new ChangeHints(this.#context, (market) => this.#books.has(market));
    else this.#hints = undefined;
    const ownRequest = this.#hints !== undefined && this.#options.registry.ids('probabilities').size === 0;
    if (ownRequest && this.#hints !== undefined && this.#hintTarget === undefined) {
      const every = Math.max(this.#options.bookPollMs, HINTS_MIN_INTERVAL_MS);
      const timing = { minIntervalMs: every, maxAgeMs: every };
      this.#hintTarget = new ChangeHintTarget(timing, this.#context, this.#hints);
      this.#dispatcher.add(this.#hintTarget);
    } else if (!ownRequest && this.#hintTarget !== undefined) {
      this.#dropTarget(this.#hintTarget);
      this.#hintTarget = undefined;
    }
    this.#hints?.prune();
  }

  #dropTarget(target: BookTarget | ChangeHintTarget): void {
    target.removed = true;
    this.#dispatcher.remove(target.key);
    if (target instanceof BookTarget) this.#context.cluster.forget(target.key);
  }

  #hintBook(market: string, askedAt: number, movedAt: number): void {
    const book = this.#books.get(market);
    if (book === undefined || (book.lastAskedAt !== undefined && book.lastAskedAt >= askedAt)) return;
    book.hintedAt ??= Math.max(movedAt, book.lastAskedAt ?? movedAt);
  }

  /** Fair share of the budget between connections and API keys (relay/targets/book-weights.ts), for the books. */
  #refreshWeights(): void {
    const now = this.#now();
    // While the budget covers every target at its minimum interval, every due target is asked and
    // weights change nothing: skip the walk over every subscription.
    if (this.#intervals.stretch <= 1 || now - this.#weightsAt < WEIGHTS_EVERY_MS) return;
    this.#weightsAt = now;
    const weights = bookWeights(this.#options.registry, this.#books.keys(), this.#options.shareOwner);
    for (const book of this.#books.values()) book.weight = weights.get(book.key) ?? 1;
  }

  #closeMarket(kind: PollKind, market: string): void {
    const reason = `${kind === 'oracle' ? 'oracle feed' : kind === 'rest' ? 'path' : 'market'} not found upstream`;
    for (const stream of this.#options.registry.closeMarket(kind, market, reason)) {
      this.#context.publisher.emitState(stream, 'closed', reason);
    }
  }

  #endStreams(kind: PollKind, id: string, reason: string): void {
    for (const stream of this.#options.registry.closeStreams(kind, id, reason)) {
      this.#context.publisher.emitState(stream, 'closed', reason);
    }
  }

  /** Marks stale every stream whose target has not been confirmed in time (relay/poll/freshness.ts). */
  #judgeFreshness(): void {
    const now = this.#now();
    const { registry, staleAfterFactor, maxAgeMs } = this.#options;
    const rule = { staleAfterFactor, requestTimeoutMs: this.#options.requestTimeoutMs ?? 5_000 };
    const { publisher } = this.#context;
    for (const [market, book] of this.#books) {
      const reason = staleReason(book, book.timing, this.#intervals.bookIntervalMs, rule, now);
      if (reason === undefined) continue;
      for (const stream of bookTargetStreams(registry, market)) publisher.markStale(stream, reason);
    }
    // Judged against the interval prices are asked at, and the maximum age every stream promises.
    this.#prices.judgeFreshness({ ...this.#priceTiming(), maxAgeMs }, rule, now);
    this.#streamTargets.judgeFreshness(rule, now);
  }

  /** Staleness must be noticed even when polls hang, so it is also judged on a timer. */
  #ensureSweep(): void {
    if (this.#sweepTimer !== undefined) return;
    const every = Math.max(50, Math.min(this.#options.bookPollMs, this.#options.pricePollMs) / 2);
    this.#sweepTimer = setInterval(() => {
      this.#followShare();
      this.#judgeFreshness();
    }, every);
    this.#sweepTimer.unref();
  }
}
