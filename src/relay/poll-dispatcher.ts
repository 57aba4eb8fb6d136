/**
 * @module relay/poll-dispatcher
 * Spends the polling budget: on every turn it asks the scheduler (relay/poll-scheduler.ts) which
 * targets to poll and starts exactly as many requests as the budget allows now — tokens at 90% of
 * `--upstream-rps` (the rest is for retries and one-off requests) and no more in flight than
 * `--upstream-concurrency`. Nothing waits in a queue: a target is chosen at the moment its request
 * starts, so one nobody wants any more is simply not there to choose, and the upstream client's
 * own queue stays empty.
 */
import { TokenBucket } from '../util/token-bucket.ts';
import { pickTargets, type SchedulerMode, type TargetView } from './poll-scheduler.ts';

/** A poll target as the dispatcher drives it; `poll` does the request and records its outcome. */
export interface DispatchTarget extends TargetView<string> {
  readonly kind: string;
  /**
   * Cluster mode: its last poll found the lease held by another relay and asked nothing upstream,
   * so it cost no budget.
   */
  readonly followed?: boolean;
  poll(): Promise<void>;
}

export interface DispatcherOptions {
  /** Requests per second the dispatcher may start (the polling share of `--upstream-rps`). */
  ratePerSecond: number;
  concurrency: number;
  mode: SchedulerMode;
  /** How often the dispatcher looks for due targets when nothing else wakes it (ms). */
  turnMs: number;
  now: () => number;
  /** Called before each choice, so weights and hints are current. */
  beforeTurn?: () => void;
}

/** Requests started, per target kind, over the last few seconds (achieved polls per second). */
const WINDOW_MS = 5_000;

export class PollDispatcher {
  readonly #options: DispatcherOptions;
  #bucket: TokenBucket;
  readonly #targets = new Map<string, DispatchTarget>();
  readonly #started: { at: number; kind: string }[] = [];
  #inFlight = 0;
  #timer: NodeJS.Timeout | undefined;
  #kicked = false;
  #stopped = false;

  constructor(options: DispatcherOptions) {
    this.#options = options;
    this.#bucket = this.#newBucket(options.ratePerSecond);
  }

  get ratePerSecond(): number {
    return this.#bucket.ratePerSecond;
  }

  /** Cluster mode: the relay's share of the budget changed; polls start at the new rate. */
  setRate(ratePerSecond: number): void {
    if (ratePerSecond !== this.#bucket.ratePerSecond) this.#bucket = this.#newBucket(ratePerSecond);
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

  get inFlight(): number {
    return this.#inFlight;
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
    this.kick();
  }

  /** The target is gone: it is never chosen again (a request already sent ends unused). */
  remove(key: string): void {
    this.#targets.delete(key);
  }

  /** Requests started per second over the last few seconds, of one target kind or (none given) all. */
  achievedPerSecond(kind?: string): number {
    this.#prune();
    const count =
      kind === undefined ? this.#started.length : this.#started.filter((entry) => entry.kind === kind).length;
    return (count * 1000) / WINDOW_MS;
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
    if (this.#timer !== undefined || this.#stopped) return;
    this.#timer = setInterval(() => this.#turn(), this.#options.turnMs);
    this.#timer.unref();
  }

  stop(): void {
    this.#stopped = true;
    clearInterval(this.#timer);
    this.#targets.clear();
  }

  #turn(): void {
    if (this.#stopped) return;
    const slots = Math.min(Math.floor(this.#bucket.tokens), this.#options.concurrency - this.#inFlight);
    if (slots <= 0) return;
    this.#options.beforeTurn?.();
    const now = this.#options.now();
    for (const key of pickTargets(this.#targets.values(), now, slots, this.#options.mode)) {
      const target = this.#targets.get(key);
      if (target !== undefined) this.#start(target, now);
    }
  }

  #start(target: DispatchTarget, now: number): void {
    this.#bucket.reserve();
    this.#inFlight += 1;
    target.inFlight = true;
    target.lastAskedAt = now;
    this.#started.push({ at: now, kind: target.kind });
    this.#prune();
    target
      .poll()
      .catch(() => {
        // A target records its own failures; nothing may escape into an unhandled rejection.
      })
      .finally(() => {
        this.#inFlight -= 1;
        target.inFlight = false;
        if (target.followed) this.#bucket.refund();
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
