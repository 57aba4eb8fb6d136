/**
 * @module relay/poll/poller-pool
 * Polls upstream for exactly what the registry holds, through each slice's collection of targets
 * (relay/poll/target-collection.ts), the one list of which is made above the slices
 * (src/poll-targets.ts): one order-book target per market with streams served from its book, one
 * price-batch target per 100 markets with `price` streams, one target per stream id of the
 * channels polled one request each and, when the budget is short, the change-hint map. The pool
 * names no channel: told one stream id at a time (relay/streams/registry.ts `PollInterest`), it
 * asks the collection of that stream's channel to follow it, and hands the targets to the
 * dispatcher (relay/poll/dispatcher.ts), which decides what is asked when, within `--upstream-rps`.
 * The rest is in files of their own: the intervals the budget allows (relay/poll/plan.ts),
 * freshness (relay/poll/freshness.ts), the targets' holders (relay/poll/share-groups.ts), and what a
 * poll found beyond its states, applied in one place (relay/poll/outcomes.ts).
 *
 * In cluster mode a target is polled by the relay holding its lease (relay/coordination/broker.ts); the
 * others apply the results it shares through the same path as their own polls.
 */

import type { Channel } from '../../../packages/protocol/src/protocol/messages.ts';
import type { Tracing } from '../../util/tracing.ts';
import type { Broker } from '../coordination/broker.ts';
import type { RelayEvents } from '../events.ts';
import { type RecordSink, StreamPublisher } from '../streams/publisher.ts';
import type { InterestChange, StreamRegistry } from '../streams/registry.ts';
import type { StreamSubscriber } from '../streams/stream.ts';
import type { StreamIdentity } from '../streams/stream-identity.ts';
import { type OneOffBudget, PollDispatcher } from './dispatcher.ts';
import { FreshnessJudge, type FreshnessReport, plannedTargets } from './freshness.ts';
import { type ExistenceJudge, trustingJudge } from './not-found.ts';
import { applyOutcome, type OutcomeEffects } from './outcomes.ts';
import { type PollIntervals, PollPlan } from './plan.ts';
import type { PollContext, PollSource, PollTarget } from './poll-target.ts';
import type { SchedulerMode } from './scheduler.ts';
import { type GroupShare, HolderChanges, holdersOf } from './share-groups.ts';
import type { TargetCollection, TargetCollectionMaker } from './target-collection.ts';

export type { PollSource } from './poll-target.ts';

export interface PollerOptions {
  source: PollSource;
  /**
   * Leases, numbering and sharing (relay/coordination/broker.ts): this relay alone or a cluster.
   * In cluster mode the poller plans with the broker's share of the cluster's budget, for the
   * targets whose lease it holds.
   */
  broker: Broker;
  /** Every slice's collection of targets, the poll side's one list (src/poll-targets.ts). */
  targets: readonly TargetCollectionMaker[];
  registry: StreamRegistry;
  events: RelayEvents;
  /** Told of every message numbered and sent here (the history recorder); nothing is recorded unless given. */
  record?: RecordSink;
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
   * the paths that answer and the catalogue (relay/poll/not-found.ts); default: every refused id.
   */
  existence?: ExistenceJudge;
  /**
   * Who a subscriber counts as in the fair share (relay/poll/share-groups.ts): the relay gives its
   * API key or its client address group; default: itself.
   */
  shareOwner?: (subscriber: StreamSubscriber) => unknown;
  /** Upstream requests that are not polls (the REST front's), in the same budget; none without it. */
  oneOffs?: OneOffBudget;
  /** `--otel-endpoint`: book polls are traced, as sampled (docs/operations.md "Traces"). */
  tracing?: Tracing | undefined;
  now?: () => number;
}

export class PollerPool {
  readonly #options: PollerOptions;
  readonly #now: () => number;
  readonly #context: PollContext;
  readonly #dispatcher: PollDispatcher;
  readonly #plan: PollPlan;
  readonly #collections: readonly TargetCollection[];
  /** Each channel's collection: a stream id's change goes to it without asking the others. */
  readonly #byChannel = new Map<Channel, TargetCollection>();
  /** The collections holding any target: the only ones a sweep walks. */
  #held: readonly TargetCollection[] = [];
  readonly #freshness: FreshnessJudge;
  readonly #holderChanges = new HolderChanges<[PollTarget, TargetCollection]>();
  readonly #ownerOf: (subscriber: StreamSubscriber) => unknown;
  #sweepTimer: NodeJS.Timeout | undefined;
  #stopped = false;
  /** Every poll's states reach the streams through this one; the app runs its rounds of `confirmed` (relay-server.ts). */
  readonly publisher: StreamPublisher;

  constructor(options: PollerOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#ownerOf = options.shareOwner ?? ((subscriber) => subscriber);
    this.#plan = new PollPlan({ ...options, shares: options.broker });
    const publisher = new StreamPublisher(options.events, this.#now, options.record);
    this.publisher = publisher;
    const effects: OutcomeEffects = {
      registry: options.registry,
      publisher,
      hinted: (outcome) => {
        for (const collection of this.#collections) collection.hinted?.(outcome);
      },
      judgeFreshness: () => this.#freshness.sweep(this.#now()),
    };
    this.#context = {
      source: options.source,
      cluster: options.broker,
      publisher,
      registry: options.registry,
      events: options.events,
      now: this.#now,
      existence: options.existence ?? trustingJudge,
      tracing: options.tracing,
      report: (outcome) => applyOutcome(outcome, effects),
      extraRequest: (target) => this.#dispatcher.extraRequest(target),
    };
    this.#dispatcher = new PollDispatcher({
      ratePerSecond: this.#plan.pollingRps,
      concurrency: options.concurrency,
      mode: options.scheduler,
      turnMs: Math.min(25, Math.max(2, Math.min(options.bookPollMs, options.pricePollMs) / 4)),
      now: this.#now,
      beforeTurn: () => this.#refreshHolders(),
      ...(options.oneOffs === undefined ? {} : { oneOffs: options.oneOffs }),
    });
    const parts = {
      context: this.#context,
      dispatcher: this.#dispatcher,
      plan: this.#plan,
      scheduler: options.scheduler,
    };
    this.#collections = options.targets.map((make) => make(parts));
    for (const collection of this.#collections)
      for (const channel of collection.channels)
        if (!this.#byChannel.has(channel)) this.#byChannel.set(channel, collection);
    this.#freshness = new FreshnessJudge(
      {
        publisher,
        rule: {
          staleAfterFactor: options.staleAfterFactor,
          requestTimeoutMs: options.requestTimeoutMs ?? 5_000,
        },
        maxAgeMs: options.maxAgeMs,
        achievedPerSecond: () => this.#dispatcher.achievedPerSecond(),
      },
      () => this.#held,
      this.#plan,
    );
    // Wired once: from here on the registry tells this pool each change of interest.
    options.registry.polledBy(this);
    this.#syncAll();
  }

  /**
   * Runs `work`, one upstream request that is not a poll, in a slot of the polling budget
   * (relay/poll/dispatcher.ts): rejects with OneOffRefusedError when too many already wait, and
   * with the signal's reason when it aborts before its start.
   */
  runOneOff<T>(work: () => Promise<T>, signal: AbortSignal): Promise<T> {
    return this.#dispatcher.runOneOff(work, signal);
  }

  /**
   * Told of every 429 upstream answers, a poll's or not, by upstream health's one listener of the
   * client's requests (./upstream-health.ts `followRateLimits`): each cuts the budget's rate and
   * holds it (relay/poll/dispatcher.ts, docs/scheduler.md "Rate limits").
   */
  readonly rateLimited = (retryAfterMs: number | undefined): void => {
    this.#dispatcher.rateLimited(retryAfterMs);
  };

  /** Requests per second kept to after upstream's 429s; undefined while not lowered. */
  get rateLimitRps(): number | undefined {
    return this.#dispatcher.limitRps;
  }

  get intervals(): PollIntervals {
    return this.#plan.intervals;
  }

  get bookMarketCount(): number {
    return plannedTargets(this.#held).books;
  }
  get priceMarketCount(): number {
    return plannedTargets(this.#held).priceMarkets;
  }

  /** Targets polled for `channel` (a channel served from the book shares its targets; `price`: markets). */
  targetCount(channel: Channel): number {
    return this.#byChannel.get(channel)?.targetCount(channel) ?? 0;
  }

  /** How often a stream of `channel` is asked for now, at most (the stretched interval). */
  intervalOf(channel: Channel): number {
    return this.#plan.intervalOf(this.#byChannel.get(channel)?.kind ?? 'stream');
  }

  /** The freshness report, from the last sweep's walk over the targets (relay/poll/freshness.ts). */
  freshness(now = this.#now()): FreshnessReport {
    return this.#freshness.report(now);
  }

  /**
   * One change of interest (relay/streams/registry.ts `PollInterest`): the one (channel, id) whose
   * streams came or went gets its target made or dropped (its book, its place in a price batch, or
   * its own target), and the plan follows the counts. What a subscribe costs, whatever is held.
   */
  wanted(change: InterestChange): void {
    if (this.#stopped) return;
    const { channel, id } = change;
    const collection = this.#byChannel.get(channel);
    if (collection !== undefined) this.#regroup(collection, collection.follow(channel, id));
    this.#targetsChanged();
  }

  /**
   * Every target brought in line with the registry by a walk over them all, the price batches cut
   * again. Only at start-up: the registry may hold streams before this pool was wired to it. Each
   * change after that is one `wanted`.
   */
  #syncAll(): void {
    for (const collection of this.#collections) this.#regroup(collection, collection.syncAll());
    for (const stream of this.#options.registry.streams())
      this.#holderChanges.add(stream.channel, stream.market);
    this.#targetsChanged();
  }

  /** `targets`' served streams changed: their holders are made again before the next turn. */
  #regroup(collection: TargetCollection, targets: readonly PollTarget[]): void {
    if (targets.length > 0)
      this.#holderChanges.regroup(
        targets.map((target) => [target, collection] as [PollTarget, TargetCollection]),
      );
  }

  /** Targets came or went: counted into a new plan, and polled. */
  #targetsChanged(): void {
    this.#held = this.#collections.filter((collection) => collection.size > 0);
    this.#freshness.targetsChanged();
    this.#replan();
    this.#dispatcher.start();
    this.#dispatcher.kick();
    this.#ensureSweep();
  }

  /** A subscriber came to or left `stream`: its target's holders are made again before the next turn. */
  holdersChanged(stream: StreamIdentity): void {
    this.#holderChanges.add(stream.channel, stream.market);
  }

  /** Each share group's use of the polling budget, most first (relay/poll/share-groups.ts). */
  shares(): GroupShare[] {
    return this.#dispatcher.shares();
  }

  /** The holders of every target whose subscribers changed, before the dispatcher chooses. */
  #refreshHolders(): void {
    const { changed, rebatched } = this.#holderChanges.take(this.#now());
    // Each target once, though many of its stream ids changed (a price batch serves 100 markets).
    const regroup = new Map<PollTarget, TargetCollection>(rebatched);
    for (const { channel, id } of changed) {
      const collection = this.#byChannel.get(channel);
      const target = collection?.targetOf(channel, id);
      if (collection !== undefined && target !== undefined) regroup.set(target, collection);
    }
    for (const [target, collection] of regroup) {
      target.holders = holdersOf(collection.streamsOf(target), this.#ownerOf);
      // Within its groups, a target more groups want goes first (relay/poll/scheduler.ts).
      target.weight = Math.max(1, target.holders.size);
      this.#dispatcher.regroup(target);
    }
  }

  /**
   * How often each target can be asked within the budget this relay plans with, from the counts of
   * targets (each kept as targets come and go: nothing here walks them).
   */
  #replan(): void {
    const targets = plannedTargets(this.#held);
    const intervals = this.#plan.plan(targets);
    for (const collection of this.#collections) collection.replanned(intervals);
    this.#options.events.emit('poll:schedule', {
      bookMarkets: targets.books,
      priceMarkets: targets.priceMarkets,
      bookIntervalMs: intervals.bookIntervalMs,
      priceIntervalMs: intervals.priceIntervalMs,
    });
  }

  /** Cluster mode: plans again when this relay's share of the budget moved. */
  #followShare(): void {
    if (!this.#plan.shareMoved()) return;
    this.#dispatcher.setRate(this.#plan.pollingRps);
    this.#replan();
  }

  stop(): void {
    this.#stopped = true;
    this.#dispatcher.stop();
    for (const collection of this.#collections) collection.clear();
    this.#held = [];
    this.#freshness.targetsChanged();
    clearInterval(this.#sweepTimer);
  }

  /** Staleness must be noticed even when polls hang, so it is also judged on a timer. */
  #ensureSweep(): void {
    if (this.#sweepTimer !== undefined) return;
    const every = Math.max(50, Math.min(this.#options.bookPollMs, this.#options.pricePollMs) / 2);
    this.#sweepTimer = setInterval(() => {
      this.#followShare();
      this.#freshness.sweep(this.#now());
    }, every);
    this.#sweepTimer.unref();
  }
}
