/**
 * @module cluster/redis-coordinator
 * Cluster mode over Redis: a lease per poll target (renewed by its holder on every poll, released
 * on unsubscribe and shutdown), each new lease with a fencing token one higher than the last, and
 * the stream log (cluster/stream-log.ts) through which the holder writes each poll's messages once
 * for the cluster. Followers receive them on the target's sharded channel and serve them as they are.
 */
import { randomBytes } from 'node:crypto';
import { targetKeys } from '../util/keys.ts';
import type { CoordinatorStatus, PollCoordinator } from './coordinator.ts';
import { OutageErrors, type OutageSummary } from './outage-errors.ts';
import { openRedis, type RedisClient, type RedisTopology } from './redis-connection.ts';
import { asError, RedisStreamLog } from './stream-log.ts';
import { CLAIM, RELEASE } from './stream-scripts.ts';

/** A fencing counter outlives its leases by far: tokens must never repeat while a writer may wait. */
const FENCE_TTL_MS = 24 * 60 * 60_000;

export interface RedisCoordinatorOptions {
  /** One Redis or a Redis Cluster (cluster/redis-connection.ts). */
  topology: RedisTopology;
  /** Updates kept per stream in Redis (`--resume-buffer`). */
  historyLength?: number;
  /** How long an update is kept in Redis (`--history-ms`). */
  historyMs?: number;
  /**
   * Called once per distinct error message of an outage (for logs): ioredis repeats the same few
   * failures on every retry and every failed command.
   */
  onError?: (error: Error) => void;
  /** Called when Redis answers again after an outage, with what went wrong meanwhile. */
  onRecover?: (summary: OutageSummary) => void;
}

export class RedisCoordinator implements PollCoordinator {
  /** This relay's identity in leases and in what it writes. */
  readonly instanceId = randomBytes(8).toString('hex');
  readonly topology: RedisTopology;
  readonly #commands: RedisClient;
  readonly #subscriber: RedisClient;
  /** Targets whose lease this relay holds, with its fencing token. */
  readonly #owned = new Map<string, number>();
  /** Targets polled without a lease because Redis could not be asked. */
  readonly #uncoordinated = new Set<string>();
  readonly #followers = new Map<string, (payload: string) => void>();
  /** Channel -> target, for the targets followed. */
  readonly #channels = new Map<string, string>();
  readonly #onError: (error: Error) => void;
  readonly #onRecover: (summary: OutageSummary) => void;
  readonly #outage = new OutageErrors();
  #lastError: string | undefined;
  readonly log: RedisStreamLog;

  constructor(options: RedisCoordinatorOptions) {
    // Commands fail fast while Redis is away (no offline queue): a claim then answers "poll it
    // yourself" at once instead of stalling the poll loop.
    this.topology = options.topology;
    this.#commands = openRedis(options.topology, { offlineQueue: false, lazyConnect: true });
    this.#subscriber = openRedis(options.topology, { offlineQueue: true, lazyConnect: true });
    this.#onError = options.onError ?? (() => {});
    this.#onRecover = options.onRecover ?? (() => {});
    for (const connection of [this.#commands, this.#subscriber]) {
      connection.on('error', (error: Error) => this.#fail(error));
      connection.on('ready', () => this.#recoverIfConnected());
    }
    this.#subscriber.on('smessage', (channel: string, message: string) => this.#onMessage(channel, message));
    this.log = new RedisStreamLog({
      redis: this.#commands,
      instanceId: this.instanceId,
      tokenOf: (target) => this.#owned.get(target),
      historyLength: options.historyLength ?? 1_000,
      historyMs: options.historyMs ?? 300_000,
      onError: (error) => this.#fail(error),
    });
  }

  /** Connects both connections; resolves either way within `timeoutMs` (the relay starts regardless). */
  async connect(timeoutMs: number): Promise<boolean> {
    const attempt = Promise.all([this.#commands.connect(), this.#subscriber.connect()]).then(
      () => true,
      (error: unknown) => {
        this.#fail(asError(error));
        return false;
      },
    );
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    const connected = await Promise.race([attempt, timeout]);
    clearTimeout(timer);
    return connected;
  }

  async claim(target: string, ttlMs: number): Promise<boolean> {
    const keys = targetKeys(target);
    try {
      const token = await this.#commands.eval(
        CLAIM,
        2,
        keys.lease,
        keys.fence,
        this.instanceId,
        String(ttlMs),
        String(FENCE_TTL_MS),
      );
      this.#recoverIfConnected();
      this.#uncoordinated.delete(target);
      if (typeof token === 'number' && token > 0) this.#owned.set(target, token);
      else this.#owned.delete(target);
      return this.#owned.has(target);
    } catch (error) {
      this.#fail(asError(error));
      // Polled without a lease: no token, so nothing this relay polls now is written to the log.
      this.#owned.delete(target);
      this.#uncoordinated.add(target);
      return true;
    }
  }

  async release(target: string): Promise<void> {
    this.#uncoordinated.delete(target);
    if (!this.#owned.delete(target)) return;
    try {
      await this.#commands.eval(RELEASE, 1, targetKeys(target).lease, this.instanceId);
    } catch (error) {
      // The lease expires by itself; another relay takes over after its TTL.
      this.#fail(asError(error));
    }
  }

  share(target: string, payload: string): void {
    this.#commands
      .spublish(targetKeys(target).channel, `${this.instanceId} ${payload}`)
      .catch((error: unknown) => {
        this.#fail(asError(error));
      });
  }

  follow(target: string, onBatch: (payload: string) => void): void {
    if (this.#followers.has(target)) return;
    this.#followers.set(target, onBatch);
    this.#channels.set(targetKeys(target).channel, target);
    this.#subscriber.ssubscribe(targetKeys(target).channel).catch((error: unknown) => {
      this.#fail(asError(error));
    });
  }

  unfollow(target: string): void {
    if (!this.#followers.delete(target)) return;
    this.#channels.delete(targetKeys(target).channel);
    this.#subscriber.sunsubscribe(targetKeys(target).channel).catch(() => {
      // Unsubscribing from a dead connection: nothing to undo.
    });
  }

  status(): CoordinatorStatus {
    return {
      mode: 'redis',
      connected: this.#connected,
      owned: this.#owned.size + this.#uncoordinated.size,
      followed: this.#followers.size,
      lastError: this.#lastError,
    };
  }

  /** Releases every lease this relay holds (docs/operations.md "Shutdown"), then disconnects. */
  async close(): Promise<void> {
    await Promise.all([...this.#owned.keys()].map((target) => this.release(target)));
    this.#uncoordinated.clear();
    this.#followers.clear();
    this.#channels.clear();
    this.#commands.disconnect();
    this.#subscriber.disconnect();
  }

  #onMessage(channel: string, message: string): void {
    const target = this.#channels.get(channel);
    if (target === undefined) return;
    const separator = message.indexOf(' ');
    // Our own writes come back to us on the channel we follow: they were applied already.
    if (separator < 0 || message.slice(0, separator) === this.instanceId) return;
    this.#followers.get(target)?.(message.slice(separator + 1));
  }

  get #connected(): boolean {
    return this.#commands.status === 'ready' && this.#subscriber.status === 'ready';
  }

  #fail(error: Error): void {
    this.#lastError = error.message;
    if (this.#outage.record(error.message)) this.#onError(error);
  }

  /** Both connections answer again: the outage is over, and its last error no longer current. */
  #recoverIfConnected(): void {
    if (!this.#outage.inOutage || !this.#connected) return;
    this.#lastError = undefined;
    const summary = this.#outage.recover();
    if (summary !== undefined) this.#onRecover(summary);
  }
}
