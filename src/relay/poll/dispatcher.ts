/**
 * @module relay/poll/dispatcher
 * Spends the polling budget: on every turn it asks the scheduler (relay/poll/scheduler.ts) which
 * targets to poll and starts exactly as many requests as the budget allows now — tokens at 90% of
 * `--upstream-rps` (the rest is for retries and one-off requests) and no more in flight than
 * `--upstream-concurrency`. No poll waits in a queue: a target is chosen at the moment its request
 * starts, so one nobody wants any more is simply not there to choose, and the upstream client's
 * own queue stays empty.
 *
 * Upstream requests that are not polls (the REST front's) take slots of the same budget
 * (docs/scheduler.md "One-off requests"): within their share of the rate they go before the polls,
 * beyond it only with what the polls leave; so they can never take more than their share from the
 * polls, and the polls can never shut them out.
 *
 * Upstream's 429s lower the rate (upstream/rate-gate.ts, docs/scheduler.md "Rate limits"): while the
 * lowered limit holds, a second bucket at that limit caps what starts, one-off requests included.
 */
import {
  afterRateLimited,
  limitAt,
  NOT_LIMITED,
  type RateBackoff,
  TokenBucket,
} from '../../upstream/rate-gate.ts';
import { DueTimes, OneOffQueue } from './dispatch-queues.ts';
import type { SchedulerMode } from './scheduler.ts';
import { type GroupShare, type SharedTarget, ShareGroups } from './share-groups.ts';

/** A poll target as the dispatcher drives it; `poll` does the request and records its outcome. */
export interface DispatchTarget extends SharedTarget {
  readonly kind: string;
  /** Its last poll sent no request upstream (another relay asked for it): it cost no budget. */
  readonly sentNothing?: boolean;
  poll(): Promise<void>;
}

export interface DispatcherOptions {
  /** Requests per second the dispatcher may start (the polling share of `--upstream-rps`). */
  ratePerSecond: number;
  concurrency: number;
  mode: SchedulerMode;
  /**
   * How soon the dispatcher looks again after a turn that started requests (ms): targets come due
   * together, and a turn ranks only a few candidates of each share group.
   */
  turnMs: number;
  now: () => number;
  /** Called before each choice, so weights and hints are current. */
  beforeTurn?: () => void;
  /** Upstream requests that are not polls; without it, none is accepted. */
  oneOffs?: OneOffBudget;
}

/** How one-off requests (the REST front's) share the polling budget. */
export interface OneOffBudget {
  /** The share of the polling rate (0..1) they may take ahead of the polls. */
  share: number;
  /** Waiting at most; more are refused at once. */
  maxWaiting: number;
}

/** What the dispatcher starts: a poll of a target, or a one-off request (kind `one-off`). */
const ONE_OFF = 'one-off';

/** Requests started, per target kind, over the last few seconds (achieved polls per second). */
const WINDOW_MS = 5_000;
/**
 * The longest the dispatcher sleeps: a safety net, since every poll that ends says when its target
 * comes due again and every new target or one-off request wakes it.
 */
const IDLE_TURN_MS = 250;
/**
 * Wakes fall on a grid of a fifth of `turnMs` (5 ms at most), so targets coming due within one step
 * are asked in one turn: a hundred books polled every 100 ms cost 200 wakes a second, not 1,000.
 */
const WAKE_STEPS_PER_TURN = 5;

export class PollDispatcher {
  readonly #options: DispatcherOptions;
  #bucket: TokenBucket;
  /** The one-off requests' share of the rate: what they may take ahead of the polls. */
  #oneOffBucket: TokenBucket | undefined;
  readonly #oneOffs: OneOffQueue;
  readonly #targets = new Map<string, DispatchTarget>();
  /** Who holds each target, and what each group has paid (relay/poll/share-groups.ts). */
  readonly #groups = new ShareGroups<string, DispatchTarget>();
  readonly #started: { at: number; kind: string }[] = [];
  #backoff: RateBackoff = NOT_LIMITED;
  /** The lowered rate after 429s, while it is below the budget's. */
  #throttle: TokenBucket | undefined;
  #inFlight = 0;
  /** When polled targets come due again: the dispatcher wakes for each, not on a fixed tick. */
  readonly #dueTimes = new DueTimes();
  #timer: NodeJS.Timeout | undefined;
  /** When `#timer` fires (Infinity: none set). */
  #wakeAt = Number.POSITIVE_INFINITY;
  #running = false;
  #kicked = false;
  #stopped = false;

  constructor(options: DispatcherOptions) {
    this.#options = options;
    this.#bucket = this.#newBucket(options.ratePerSecond);
    this.#oneOffBucket = this.#newOneOffBucket(options.ratePerSecond);
    this.#oneOffs = new OneOffQueue(options.oneOffs?.maxWaiting ?? 0);
  }

  get ratePerSecond(): number {
    return this.#bucket.ratePerSecond;
  }

  /** Cluster mode: the relay's share of the budget changed; requests start at the new rate. */
  setRate(ratePerSecond: number): void {
    if (ratePerSecond === this.#bucket.ratePerSecond) return;
    this.#bucket = this.#newBucket(ratePerSecond);
    this.#oneOffBucket = this.#newOneOffBucket(ratePerSecond);
  }

  #newBucket(ratePerSecond: number): TokenBucket {
    return new TokenBucket({
      ratePerSecond,
      // A fifth of a second's worth: enough to start a burst of new subscriptions at once, not
      // enough to bunch a whole second of polls together.
      capacity: Math.max(1, Math.floor(ratePerSecond / 5)),
      now: this.#options.now,
    });
  }

  #newOneOffBucket(ratePerSecond: number): TokenBucket | undefined {
    const oneOffRate = ratePerSecond * (this.#options.oneOffs?.share ?? 0);
    return oneOffRate > 0
      ? new TokenBucket({
          ratePerSecond: oneOffRate,
          capacity: Math.max(1, Math.floor(oneOffRate / 5)),
          now: this.#options.now,
        })
      : undefined;
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  /** Upstream answered 429 (`retryAfterMs`: its Retry-After): the rate in use is cut and held. */
  rateLimited(retryAfterMs: number | undefined): void {
    const now = this.#options.now();
    this.#backoff = afterRateLimited(this.#backoff, {
      now,
      retryAfterMs,
      usedRps: this.achievedPerSecond(),
      configuredRps: this.#bucket.ratePerSecond,
    });
    this.#applyBackoff(now);
  }

  /** Requests per second kept to after 429s; undefined while the budget's own rate applies. */
  get limitRps(): number | undefined {
    return limitAt(this.#backoff, this.#options.now(), this.#bucket.ratePerSecond);
  }

  /** The throttle follows the backoff's limit, rebuilt only when it moved by a tenth or more. */
  #applyBackoff(now: number): void {
    const limit = limitAt(this.#backoff, now, this.#bucket.ratePerSecond);
    if (limit === undefined) {
      this.#throttle = undefined;
      return;
    }
    const current = this.#throttle?.ratePerSecond;
    if (current !== undefined && Math.abs(limit - current) < current / 10) return;
    // One token at most: what the cut allows starts spaced out, not in a burst.
    this.#throttle = new TokenBucket({ ratePerSecond: limit, capacity: 1, now: this.#options.now });
    if (current !== undefined && limit < current) this.#throttle.reserve();
  }

  /** Targets currently known: the bound on anything that could wait for the budget. */
  get size(): number {
    return this.#targets.size;
  }

  targets(): IterableIterator<DispatchTarget> {
    return this.#targets.values();
  }

  get(key: string): DispatchTarget | undefined {
    return this.#targets.get(key);
  }

  add(target: DispatchTarget): void {
    this.#targets.set(target.key, target);
    this.#groups.place(target, this.#options.now());
    this.kick();
  }

  /** The target's holders changed: it is filed under its new share groups. */
  regroup(target: DispatchTarget): void {
    if (this.#targets.get(target.key) === target) this.#groups.place(target, this.#options.now());
  }

  /** The target is gone: it is never chosen again (a request already sent ends unused). */
  remove(key: string): void {
    this.#targets.delete(key);
    this.#groups.remove(key);
  }

  /** Each share group's use of the polling budget, most first. */
  shares(): GroupShare[] {
    return this.#groups.shares(this.#options.now());
  }

  /**
   * A poll under way sends one more request (the next page of a listing): it takes a token of the
   * budget like any other, paid by the target's holders; resolves when the budget allows it. The
   * token is taken at once (the balance may go below zero), so no new poll starts before it is
   * paid back: however many pages a poll reads, the polls keep to the budget.
   */
  async extraRequest(target: DispatchTarget): Promise<void> {
    const now = this.#options.now();
    this.#groups.charge(target, now);
    this.#started.push({ at: now, kind: target.kind });
    const waitMs = Math.max(this.#bucket.reserve(), this.#throttle?.reserve() ?? 0);
    if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
  }

  /** Requests started per second over the last few seconds, of one target kind or (none given) all. */
  achievedPerSecond(kind?: string): number {
    this.#prune();
    const count =
      kind === undefined ? this.#started.length : this.#started.filter((entry) => entry.kind === kind).length;
    return (count * 1000) / WINDOW_MS;
  }

  /** One-off requests waiting for a slot. */
  get oneOffsWaiting(): number {
    return this.#oneOffs.length;
  }

  /**
   * Runs `work`, one upstream request that is not a poll, when the budget gives it a slot.
   * Rejects with OneOffRefusedError when `oneOffs.maxWaiting` already wait, with an error when the
   * dispatcher is stopped, and with the signal's reason when it aborts before its start.
   */
  runOneOff<T>(work: () => Promise<T>, signal: AbortSignal): Promise<T> {
    const result = this.#oneOffs.enqueue(work, this.#stopped ? AbortSignal.abort(stoppedError()) : signal);
    this.start();
    this.kick();
    return result;
  }

  /** Looks for work on the next turn of the event loop (new targets, a finished poll). */
  kick(): void {
    if (this.#kicked || this.#stopped) return;
    this.#kicked = true;
    setImmediate(() => {
      this.#kicked = false;
      this.#turn();
    });
  }

  start(): void {
    if (this.#running || this.#stopped) return;
    this.#running = true;
    this.#wakeBy(this.#options.now() + this.#options.turnMs);
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#dueTimes.clear();
    for (const key of this.#targets.keys()) this.#groups.remove(key);
    this.#targets.clear();
    this.#oneOffs.clear(stoppedError());
  }

  /**
   * Starts what is due, then sets the next wake: when the next polled target comes due, when the
   * budget has a token again if it ran short, and soon again when the polls it started of targets
   * asked before are not as many as the due times it took: some may still wait (a turn ranks only a
   * few candidates of each share group, and not every turn ranks again), or more may follow (a burst
   * of new ones).
   */
  #turn(): void {
    if (this.#stopped) return;
    // One reading of the clock for the whole turn: the due times taken are those of the targets the
    // turn could choose. A target that comes due while the turn starts others (a busy machine) keeps
    // its due time, and the dispatcher wakes for it.
    const now = this.#options.now();
    const startedDue = this.#startDue(now);
    const cameDue = this.#dueTimes.takeUntil(now);
    let next = Math.min(now + IDLE_TURN_MS, this.#dueTimes.next);
    if (startedDue !== cameDue) next = Math.min(next, now + this.#options.turnMs);
    if (this.#inFlight < this.#options.concurrency) {
      const tokenWait = Math.max(this.#bucket.msUntilToken(), this.#throttle?.msUntilToken() ?? 0);
      if (tokenWait > 0) next = Math.min(next, now + tokenWait);
    }
    this.#wakeBy(next);
  }

  /** The dispatcher turns again at `at` at the latest (an earlier wake already set stands). */
  #wakeBy(at: number): void {
    if (!this.#running || this.#stopped || at >= this.#wakeAt) return;
    clearTimeout(this.#timer);
    const now = this.#options.now();
    const step = Math.max(1, this.#options.turnMs / WAKE_STEPS_PER_TURN);
    this.#wakeAt = Math.max(Math.ceil(at / step) * step, now + 1);
    this.#timer = setTimeout(this.#woken, this.#wakeAt - now);
    this.#timer.unref();
  }

  readonly #woken = (): void => {
    this.#timer = undefined;
    this.#wakeAt = Number.POSITIVE_INFINITY;
    this.#turn();
  };

  /**
   * Starts what the budget allows at `now`. Returns how many of the polls started had a due time
   * (every target asked before: its last poll's end filed one), to be matched against the due times
   * taken; a first ask or a one-off request has none.
   */
  #startDue(now: number): number {
    this.#applyBackoff(now);
    let slots = Math.min(Math.floor(this.#bucket.tokens), this.#options.concurrency - this.#inFlight);
    if (this.#throttle !== undefined) slots = Math.min(slots, Math.floor(this.#throttle.tokens));
    if (slots <= 0) return 0;
    // One-off requests first, within their share: whatever they ask, the polls keep the rest.
    const ahead = Math.min(slots, Math.floor(this.#oneOffBucket?.tokens ?? 0));
    slots -= this.#startOneOffs(ahead, this.#oneOffBucket);
    let startedDue = 0;
    if (slots > 0) {
      this.#options.beforeTurn?.();
      for (const target of this.#groups.pick(now, slots, this.#options.mode)) {
        if (target.lastAskedAt !== undefined) startedDue += 1;
        this.#start(target, now);
        slots -= 1;
      }
    }
    // What the polls did not need: one-off requests beyond their share.
    this.#startOneOffs(slots, undefined);
    return startedDue;
  }

  #start(target: DispatchTarget, now: number): void {
    target.inFlight = true;
    target.lastAskedAt = now;
    this.#spend(target.kind, now, () =>
      target
        .poll()
        .catch(() => {
          // A target records its own failures; nothing may escape into an unhandled rejection.
        })
        .finally(() => {
          target.inFlight = false;
          this.#dueTimes.add(Math.max(now + target.timing.minIntervalMs, target.retryAt ?? 0));
          // Nothing went upstream: the token goes back, and its holders did not pay for it.
          if (target.sentNothing) {
            this.#bucket.refund();
            this.#throttle?.refund();
            this.#groups.charge(target, this.#options.now(), -1);
          }
        }),
    );
  }

  /** Starts up to `count` waiting one-off requests, each also charged to `share` if given; how many. */
  #startOneOffs(count: number, share: TokenBucket | undefined): number {
    let started = 0;
    while (started < count) {
      const waiting = this.#oneOffs.take();
      if (waiting === undefined) break;
      share?.reserve();
      this.#spend(ONE_OFF, this.#options.now(), () => waiting.start());
      started += 1;
    }
    return started;
  }

  /** One request started: a token of the budget, a slot until `run` settles, then another turn. */
  #spend(kind: string, now: number, run: () => Promise<void>): void {
    this.#bucket.reserve();
    this.#throttle?.reserve();
    this.#inFlight += 1;
    this.#started.push({ at: now, kind });
    this.#prune();
    void run().finally(() => {
      this.#inFlight -= 1;
      this.kick();
    });
  }

  #prune(): void {
    const since = this.#options.now() - WINDOW_MS;
    let drop = 0;
    while (drop < this.#started.length && this.#started[drop]!.at < since) drop++;
    this.#started.splice(0, drop);
  }
}

function stoppedError(): Error {
  return new Error('the poller is stopped');
}
