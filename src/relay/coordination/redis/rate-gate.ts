/**
 * @module relay/coordination/redis/rate-gate
 * `--upstream-rps` for the whole cluster (docs/cluster.md "One budget"): every relay takes its
 * upstream rate tokens from one bucket in Redis, a few at a time so that most requests do not wait
 * for a round trip to Redis. Each relay reports what it spends and learns its share of the budget;
 * while Redis is away it keeps to that last share (or, never having learnt one, to
 * `--fail-open-rps-fraction` of the budget), so an outage does not multiply upstream load.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { LocalRateGate, type RateGate } from '../../../upstream/rate-gate.ts';
import { BUCKET_KEY, budgetShare, SPENDING_FORMAT_KEY, SPENDING_KEY } from './budget-scripts.ts';
import { openRedis, type RedisClient, type RedisTopology } from './connection.ts';
import { RedisFormats } from './formats.ts';

/** A leased token unused for this long goes back to nobody: a relay must not hoard the budget. */
const LEASE_MS = 200;
/** Tokens leased per round trip: 50 ms of the cluster's budget, at least 1. */
const LEASE_SECONDS = 0.05;
/** Each relay reports its spending this often; a relay silent for 5 reports is gone. */
const REPORT_MS = 1_000;
const GONE_AFTER_MS = 5 * REPORT_MS;
/**
 * Weight of the newest second in the reported spending. Relays compute their shares a moment apart;
 * smoothed spending changes little in that moment, so the shares still add up to about 1.
 */
const SMOOTHING = 0.3;

export interface BudgetStatus {
  /** The cluster's budget, requests per second. */
  rps: number;
  /** This relay's last known share of it, 0..1; undefined until Redis has answered once. */
  share: number | undefined;
  /**
   * True while Redis is away, or its bucket is of a format this relay does not read, and this relay
   * keeps to `failOpenRps` by itself.
   */
  failOpen: boolean;
  /** The rate this relay keeps to while Redis is away. */
  failOpenRps: number;
}

export interface RedisRateGateOptions {
  topology: RedisTopology;
  /** This relay's name in the spending table (the coordinator's instance id). */
  instanceId: string;
  rps: number;
  /** Fraction of `rps` kept to while Redis is away and no share was ever learnt. */
  failOpenFraction: number;
  /** Called once per distinct error of a budget script (not for Redis being away). */
  onError?: (error: Error) => void;
  /** The format the budget is written in, and those read (the shipped ones unless given). */
  formats?: RedisFormats;
}

/**
 * The bucket is in a format this relay does not read (a newer relay's, during an upgrade): it keeps
 * to its last share by itself, as while Redis is away, rather than overwrite the other's bucket.
 */
class UnreadableBucket extends Error {}

export class RedisRateGate implements RateGate {
  readonly #redis: RedisClient;
  readonly #options: RedisRateGateOptions;
  readonly #formats: RedisFormats;
  readonly #batch: number;
  readonly #reporter: NodeJS.Timeout;
  #leased = 0;
  #leasedAt = 0;
  #leasing: Promise<number> | undefined;
  /** Tokens taken since the last report: this relay's spending. */
  #spent = 0;
  #spentRps: number | undefined;
  #reportedAt = performance.now();
  #share: number | undefined;
  /** The local bucket kept to while Redis is away. */
  #fallback: LocalRateGate | undefined;
  /** Aborted when Redis is back: callers still waiting on the local bucket take from Redis instead. */
  #redisBack: AbortController | undefined;
  #lastError: string | undefined;
  /** The bucket was last found in a format this relay does not read (it keeps to its share alone). */
  #bucketUnreadable = false;

  constructor(options: RedisRateGateOptions) {
    this.#options = options;
    this.#formats = options.formats ?? new RedisFormats();
    this.#batch = Math.max(1, Math.floor(options.rps * LEASE_SECONDS));
    // As the coordinator's connection: fail fast while Redis is away, so requests fall back at once.
    this.#redis = openRedis(options.topology, { offlineQueue: false, lazyConnect: false });
    // The coordinator's connections to the same Redis log its outages (once per distinct error).
    this.#redis.on('error', () => {});
    this.#redis.on('ready', () => {
      this.#redisBack?.abort();
      this.#redisBack = undefined;
    });
    this.#reporter = setInterval(() => void this.#report(), REPORT_MS).unref();
  }

  status(): BudgetStatus {
    return {
      rps: this.#options.rps,
      share: this.#share,
      failOpen: this.#redis.status !== 'ready' || this.#bucketUnreadable,
      failOpenRps: this.#failOpenRps(),
    };
  }

  async acquire(signal: AbortSignal): Promise<void> {
    for (;;) {
      signal.throwIfAborted();
      if (this.#leased > 0 && performance.now() - this.#leasedAt <= LEASE_MS) {
        this.#leased -= 1;
        this.#spent += 1;
        return;
      }
      this.#leased = 0;
      let waitMs: number;
      try {
        if (this.#redis.status !== 'ready') throw new Error(`redis ${this.#redis.status}`);
        this.#leasing ??= this.#lease().finally(() => {
          this.#leasing = undefined;
        });
        waitMs = await this.#leasing;
      } catch (error) {
        if (this.#redis.status === 'ready' && !(error instanceof UnreadableBucket))
          this.#reportError(asError(error));
        if (await this.#failOpen(signal)) return;
        continue;
      }
      this.#fallback = undefined;
      if (waitMs > 0) await delay(waitMs, undefined, { signal });
    }
  }

  async close(): Promise<void> {
    clearInterval(this.#reporter);
    this.#redis.disconnect();
  }

  /** Leases a batch; resolves with 0 when tokens arrived, else the wait until the next one. */
  async #lease(): Promise<number> {
    const { rps } = this.#options;
    const formats = this.#formats;
    const [granted, waitMs, format] = (await this.#redis.relayLeaseTokens(
      1,
      BUCKET_KEY,
      String(rps),
      String(rps),
      String(this.#batch),
      String(formats.writer('budget').version),
      formats.readable('budget'),
    )) as [number, number, string?];
    this.#bucketUnreadable = granted < 0;
    if (granted < 0) {
      formats.skip('budget', format ?? '1');
      throw new UnreadableBucket('the budget is in a format this relay does not read');
    }
    if (granted === 0) return Math.max(1, waitMs);
    this.#leased = granted;
    this.#leasedAt = performance.now();
    return 0;
  }

  /**
   * A token from the local bucket; false when Redis came back first: the caller takes from the
   * shared bucket then, so the callers queued through an outage do not spend past the budget
   * once the cluster shares one bucket again.
   */
  async #failOpen(signal: AbortSignal): Promise<boolean> {
    const rps = this.#failOpenRps();
    if (this.#fallback?.ratePerSecond !== rps) this.#fallback = new LocalRateGate(rps);
    this.#redisBack ??= new AbortController();
    const back = this.#redisBack.signal;
    try {
      await this.#fallback.acquire(AbortSignal.any([signal, back]));
    } catch (error) {
      if (signal.aborted || !back.aborted) throw error;
      return false;
    }
    this.#spent += 1;
    return true;
  }

  #failOpenRps(): number {
    const share = this.#share ?? this.#options.failOpenFraction;
    return Math.max(1, share * this.#options.rps);
  }

  #reportError(error: Error): void {
    if (error.message === this.#lastError) return;
    this.#lastError = error.message;
    this.#options.onError?.(error);
  }

  async #report(): Promise<void> {
    const now = performance.now();
    const lastRps = (this.#spent * 1000) / Math.max(1, now - this.#reportedAt);
    const ownRps =
      this.#spentRps === undefined ? lastRps : this.#spentRps + SMOOTHING * (lastRps - this.#spentRps);
    this.#spentRps = ownRps;
    this.#spent = 0;
    this.#reportedAt = now;
    if (this.#redis.status !== 'ready') return;
    try {
      const formats = this.#formats;
      const [relays, total, unread] = (await this.#redis.relayReportSpending(
        2,
        SPENDING_KEY,
        SPENDING_FORMAT_KEY,
        this.#options.instanceId,
        ownRps.toFixed(3),
        String(GONE_AFTER_MS),
        String(formats.writer('budget').version),
        formats.readable('budget'),
      )) as [number, string, number];
      formats.skip('budget', undefined, unread);
      this.#share = budgetShare({ own: ownRps, total: Number(total), relays, rps: this.#options.rps });
    } catch (error) {
      this.#reportError(asError(error));
    }
  }
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
