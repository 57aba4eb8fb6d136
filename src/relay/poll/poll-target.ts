/**
 * @module relay/poll/poll-target
 * What every poll target (a book, a price batch, the change-hint map) shares: its timing, what its
 * responses have shown (confirmation, change rate, last error), the order of its responses, the
 * context it polls through, and a poll that returns what else it found (relay/poll/outcomes.ts)
 * for the pool to apply. Responses are ordered by when the relay asked for them, never by
 * upstream's clock: a response to an older request than the one last applied is dropped, so an
 * absurd upstream timestamp is only data (docs/operations.md "Freshness").
 */
import type { CanonicalRestPath } from '../../../packages/protocol/src/protocol/rest-paths.ts';
import type { CallInit, MarketsQuery } from '../../upstream/client.ts';
import { publicReason, UpstreamHttpError } from '../../upstream/errors.ts';
import type {
  ClobPriceBatchResponse,
  MarketActivityResponse,
  MarketResponse,
  MarketsResponse,
  OrderBook,
} from '../../upstream/schemas.ts';
import type { Tracing } from '../../util/tracing.ts';
import type { EventArgs, ReadHooks } from '../channels/relay-definition.ts';
import type { ChannelUpstream } from '../channels/relay-registry.ts';
import type { Broker } from '../coordination/broker.ts';
import type { PollTimes } from '../coordination/stream-numbering.ts';
import type { PollKind, RelayEvents } from '../events.ts';
import type { StreamPublisher } from '../streams/publisher.ts';
import type { StreamRegistry } from '../streams/registry.ts';
import type { AnyStream } from '../streams/stream.ts';
import type { DispatchTarget } from './dispatcher.ts';
import type { ExistenceJudge } from './not-found.ts';
import type { PollOutcome } from './outcomes.ts';
import {
  type ChangeHistory,
  changeHistoryAfter,
  changeRateOf,
  initialChangeHistory,
  type TargetTiming,
} from './scheduler.ts';

/** The upstream calls polling needs (the typed client satisfies it; tests may fake it). */
export interface PollSource extends ChannelUpstream {
  /** With a memo, a body identical to the last one resolves to the same object (upstream/outcome.ts). */
  orderBook(marketId: string, init?: CallInit<OrderBook>): Promise<OrderBook>;
  clobPrices(marketIds: string[]): Promise<ClobPriceBatchResponse>;
  market(marketId: string): Promise<MarketResponse>;
  /** One page of the market catalogue. */
  markets(query: MarketsQuery): Promise<MarketsResponse>;
  /** One page of a market's trade activity, newest first. */
  marketActivity(marketId: string, page: { limit: number; offset: number }): Promise<MarketActivityResponse>;
  /** A public GET's body as upstream served it (the `rest` channel). */
  publicBody(request: Pick<CanonicalRestPath, 'template' | 'pathname' | 'query'>): Promise<unknown>;
}

/** Everything a target polls through. */
export interface PollContext {
  source: PollSource;
  cluster: Broker;
  publisher: StreamPublisher;
  registry: StreamRegistry;
  events: RelayEvents;
  now: () => number;
  /** Whether a failed poll means upstream does not have the id (relay/poll/not-found.ts). */
  existence: ExistenceJudge;
  /** `--otel-endpoint`: book polls are traced, as sampled (docs/operations.md "Traces"). */
  tracing?: Tracing | undefined;
  /**
   * What the lease holder shared showed beyond its states (it arrives outside any poll); a poll's
   * own outcomes are what `poll` returns.
   */
  report(outcome: PollOutcome): void;
  /**
   * A poll of `target` sends a request beyond its first (the next page of a listing): resolves
   * when the budget allows it, the target's holders paying for it (relay/poll/dispatcher.ts
   * `extraRequest`). Without it, further pages go out at once (tests driving a target alone).
   */
  extraRequest?(target: DispatchTarget): Promise<void>;
}

/** What a target's answers have shown, as freshness is judged from it (relay/poll/freshness.ts). */
export interface Confirmation {
  addedAt: number;
  confirmedAt: number | undefined;
  /** Why the last request failed; undefined after a success. */
  lastError: string | undefined;
  /** Measured mean time between requests (ms); undefined before the second. */
  meanAskGapMs: number | undefined;
  /** When the upstream request that may confirm it next was sent; undefined while none is under way. */
  awaitingSince: number | undefined;
}

/**
 * One confirmation as freshness judges it: against `timing` and the interval the budget allows its
 * kind, the streams it feeds asked for only when it is stale.
 */
export type ConfirmationVisit = (
  confirmation: Confirmation,
  timing: TargetTiming,
  streamsOf: () => Iterable<AnyStream>,
) => void;

/** What freshness judges of a collection's targets (relay/poll/freshness.ts). */
export interface FreshnessView {
  /** Each confirmation freshness judges. */
  visit(visit: ConfirmationVisit): void;
  /** Each request's measured mean time between asks; undefined for one not asked twice yet. */
  askGaps(): Iterable<number | undefined>;
}

/**
 * A collection's targets by key, each judged as its own confirmation against its own timing: the
 * books, the targets of one request per stream id. The collection hands the judge this map itself,
 * so a sweep reads the targets without calling into any channel's collection.
 */
export class TargetsByKey<T extends PollTarget> extends Map<string, T> implements FreshnessView {
  readonly #streamsOf: (target: T) => Iterable<AnyStream>;

  /** `streamsOf`: the streams a target's request serves, asked only of a stale one. */
  constructor(streamsOf: (target: T) => Iterable<AnyStream>) {
    super();
    this.#streamsOf = streamsOf;
  }

  visit(visit: ConfirmationVisit): void {
    for (const target of this.values()) visit(target, target.timing, () => this.#streamsOf(target));
  }

  askGaps(): Iterable<number | undefined> {
    return Array.from(this.values(), (target) => target.meanAskGapMs);
  }
}

/** The mean gap between requests after one more, weighting recent gaps most. */
export function meanGapAfter(mean: number | undefined, gapMs: number): number {
  return mean === undefined ? gapMs : 0.8 * mean + 0.2 * gapMs;
}

export abstract class PollTarget implements DispatchTarget, Confirmation {
  readonly key: string;
  abstract readonly kind: string;
  timing: TargetTiming;
  readonly addedAt: number;
  lastAskedAt: number | undefined;
  confirmedAt: number | undefined;
  lastError: string | undefined;
  meanAskGapMs: number | undefined;
  inFlight = false;
  weight = 1;
  /** Its share groups (relay/poll/share-groups.ts): who pays for its requests. */
  holders: ReadonlySet<unknown> = new Set();
  hintedAt: number | undefined;
  coveredAt: number | undefined;
  retryAt: number | undefined;
  changeRate = changeRateOf(initialChangeHistory);
  /** Its last poll asked nothing upstream: another relay holds its lease. */
  sentNothing = false;
  /** Set when the target is dropped: a response still on its way is then ignored. */
  removed = false;
  protected readonly context: PollContext;
  #history: ChangeHistory = initialChangeHistory;
  /** When the request behind the newest state applied was asked. */
  #appliedAskedAt = Number.NEGATIVE_INFINITY;
  #previousAskedAt: number | undefined;
  /** When the request under way was sent (a poll of several requests sends each in turn). */
  #sentAt: number | undefined;
  /** Requests the poll under way has sent. */
  #requests = 0;
  /**
   * The upstream calls of this target's polls: the poll's first request is the one the dispatcher
   * gave it a token for; each further one (the next page of a listing) waits for a token of its
   * own, so a poll of twenty pages spends twenty of the budget's tokens, not one.
   */
  protected readonly source: PollSource;

  constructor(key: string, timing: TargetTiming, context: PollContext) {
    this.key = key;
    this.timing = timing;
    this.context = context;
    this.addedAt = context.now();
    this.source = meteredSource(context.source, async () => {
      this.#requests += 1;
      if (this.#requests > 1) await context.extraRequest?.(this);
    });
  }

  get awaitingSince(): number | undefined {
    return this.inFlight ? this.#sentAt : undefined;
  }

  get awaitingFirstAsk(): boolean {
    return this.lastAskedAt === undefined;
  }

  /** One poll: asks upstream (or not: the lease is another relay's), publishes, and says what else it found. */
  protected abstract pollOnce(): Promise<readonly PollOutcome[]>;

  async poll(): Promise<void> {
    for (const outcome of await this.pollOnce()) this.context.report(outcome);
  }

  /** The time the current request was asked (set by the dispatcher), measuring the gap since the last. */
  protected beginAsk(): number {
    const askedAt = this.lastAskedAt ?? this.context.now();
    if (this.#previousAskedAt !== undefined)
      this.meanAskGapMs = meanGapAfter(this.meanAskGapMs, askedAt - this.#previousAskedAt);
    this.#previousAskedAt = askedAt;
    this.#sentAt = askedAt;
    this.#requests = 0;
    this.hintedAt = undefined;
    return askedAt;
  }

  /** A poll sends one more request (the next page): its own timeout starts now. */
  protected requestSent(): void {
    this.#sentAt = this.context.now();
  }

  /** What a channel's read of one or more requests reports through while it runs in this target. */
  protected readHooks<EventMap extends EventArgs<EventMap>>(): ReadHooks<EventMap> {
    return {
      onRequest: () => this.requestSent(),
      // RelayEvents' emit does not resolve its arguments' type for an event not yet known; the
      // hook's own signature ties them to the event.
      emit: (event, ...args) => this.context.events.emit(event, ...(args as never)),
    };
  }

  /**
   * Whether the poll under way failed at its first request: a refusal of that one may say upstream
   * has no such id; a refusal of a later page is about that page only.
   */
  protected get failedAtFirstRequest(): boolean {
    return this.#requests === 1;
  }

  /**
   * Whether this relay asks upstream for this poll: always alone, in cluster mode only while it holds
   * the target's lease (claimed for a few of its expected intervals), and never once it was dropped.
   */
  protected async holdsLease(): Promise<boolean> {
    const expectedIntervalMs = Math.min(this.timing.maxAgeMs, this.meanAskGapMs ?? this.timing.minIntervalMs);
    return (await this.context.cluster.claim(this.key, expectedIntervalMs)) && !this.removed;
  }

  /** Whether a response to the request asked at `askedAt` is newer than every one applied. */
  protected accepts(askedAt: number): boolean {
    return !this.removed && askedAt >= this.#appliedAskedAt;
  }

  /**
   * Waits for the answer to the request asked at `askedAt`, and stamps it as it arrives: its times
   * as numbering takes them (upstream's time of its data, and now), and whether it is newer than
   * every answer applied. The target hands its request here rather than asking this class after
   * the answer: the answer comes back through this class on its way to the target, and the target's
   * handling of it never calls back into the poll side.
   */
  protected async answered<T extends { readonly timestamp: string }>(
    askedAt: number,
    request: Promise<T>,
    trace?: PollTimes['trace'],
  ): Promise<{ value: T; times: PollTimes; accepted: boolean }> {
    const value = await request;
    const times = pollTimes(value.timestamp, askedAt, this.context.now(), trace);
    return { value, times, accepted: this.accepts(askedAt) };
  }

  /** A response was applied: the target is confirmed, and its change rate learns whether it moved. */
  protected confirmed(askedAt: number, changed: boolean | undefined): void {
    if (changed !== undefined && Number.isFinite(this.#appliedAskedAt)) {
      this.#history = changeHistoryAfter(this.#history, changed, askedAt - this.#appliedAskedAt);
      this.changeRate = changeRateOf(this.#history);
    }
    this.#appliedAskedAt = askedAt;
    this.confirmedAt = this.context.now();
    this.lastError = undefined;
  }

  /** A request failed: recorded, and freshness is to be judged now. */
  protected failed(kind: PollKind, markets: number, askedAt: number, error: unknown): PollOutcome[] {
    // What clients are told; the error itself goes to the log (poll:done).
    this.lastError = publicReason(error);
    // Upstream's Retry-After holds this target back; the budget's own cut is the dispatcher's.
    const retryAfterMs = error instanceof UpstreamHttpError ? error.retryAfterMs : undefined;
    this.retryAt = retryAfterMs === undefined ? undefined : this.context.now() + retryAfterMs;
    this.emitPoll(kind, markets, 'error', askedAt, error);
    return [{ type: 'failed' }];
  }

  protected emitPoll(
    kind: PollKind,
    markets: number,
    outcome: 'ok' | 'error' | 'not_found',
    askedAt: number,
    error?: unknown,
  ): void {
    this.context.events.emit('poll:done', {
      kind,
      markets,
      outcome,
      durationMs: this.context.now() - askedAt,
      ...(error instanceof Error ? { error } : {}),
    });
  }
}

/**
 * `source`, each call first awaiting `before` (which may hold it until the budget allows it): every
 * call of the source alike, whichever channel's upstream part it is (channels/relay-registry.ts).
 */
function meteredSource(source: PollSource, before: () => Promise<void>): PollSource {
  return new Proxy(source, {
    get(target, name, receiver) {
      const value: unknown = Reflect.get(target, name, receiver);
      if (typeof value !== 'function') return value;
      const call = value as (...args: unknown[]) => unknown;
      return async (...args: unknown[]) => {
        await before();
        return call.apply(target, args);
      };
    },
  });
}

/**
 * A poll's times as its numbering takes them: `ts` is upstream's time of the data as protocol.md
 * spells it (ISO 8601 UTC with milliseconds, which upstream's batch prices may omit), `rts` when
 * the answer arrived.
 */
export function pollTimes(
  upstreamTimestamp: string,
  askedAt: number,
  receivedAt: number,
  trace?: PollTimes['trace'],
): PollTimes {
  const ts = new Date(upstreamTimestamp).toISOString();
  return { askedAt, ts, rts: new Date(receivedAt).toISOString(), receivedAt, trace };
}
