/**
 * @module cluster/redis-coordinator
 * Cluster mode over Redis: a lease per poll target (`SET NX PX`, renewed by its holder on every
 * poll, released on unsubscribe and shutdown) and a pub/sub channel per target on which the holder
 * shares each upstream result. Followers feed those results to their own streams exactly as if
 * they had polled, so every relay diffs and numbers its streams itself while upstream sees one
 * poll per market for the whole cluster.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { CoordinatorStatus, PollCoordinator } from './coordinator.ts';
import { OutageErrors, type OutageSummary } from './outage-errors.ts';

const PREFIX = 'market-relay:';

/** Take the lease when free, renew it when ours; 1 = ours now, 0 = another relay's. */
const CLAIM = `
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end
if not holder then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end
return 0`;

/** Delete the lease only when it is still ours. */
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

export interface RedisCoordinatorOptions {
  url: string;
  /**
   * Called once per distinct error message of an outage (for logs): ioredis repeats the same few
   * failures on every retry and every failed command.
   */
  onError?: (error: Error) => void;
  /** Called when Redis answers again after an outage, with what went wrong meanwhile. */
  onRecover?: (summary: OutageSummary) => void;
}

export class RedisCoordinator implements PollCoordinator {
  /** This relay's identity in leases and shared results. */
  readonly instanceId = randomBytes(8).toString('hex');
  readonly #commands: Redis;
  readonly #subscriber: Redis;
  readonly #owned = new Set<string>();
  readonly #followers = new Map<string, (payload: string) => void>();
  readonly #onError: (error: Error) => void;
  readonly #onRecover: (summary: OutageSummary) => void;
  readonly #outage = new OutageErrors();
  #lastError: string | undefined;

  constructor(options: RedisCoordinatorOptions) {
    // Commands fail fast while Redis is away (no offline queue): a claim then answers "poll it
    // yourself" at once instead of stalling the poll loop.
    const redisOptions = { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: true };
    this.#commands = new Redis(options.url, redisOptions);
    this.#subscriber = new Redis(options.url, { ...redisOptions, enableOfflineQueue: true });
    this.#onError = options.onError ?? (() => {});
    this.#onRecover = options.onRecover ?? (() => {});
    for (const connection of [this.#commands, this.#subscriber]) {
      connection.on('error', (error: Error) => this.#fail(error));
      connection.on('ready', () => this.#recoverIfConnected());
    }
    this.#subscriber.on('message', (channel: string, message: string) => this.#onMessage(channel, message));
  }

  /** Connects both connections; resolves either way within `timeoutMs` (the relay starts regardless). */
  async connect(timeoutMs: number): Promise<boolean> {
    const attempt = Promise.all([this.#commands.connect(), this.#subscriber.connect()]).then(
      () => true,
      (error: unknown) => {
        this.#fail(error instanceof Error ? error : new Error(String(error)));
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
    try {
      const result = await this.#commands.eval(
        CLAIM,
        1,
        PREFIX + 'lease:' + target,
        this.instanceId,
        String(ttlMs),
      );
      const ours = result === 1;
      this.#recoverIfConnected();
      if (ours) this.#owned.add(target);
      else this.#owned.delete(target);
      return ours;
    } catch (error) {
      this.#fail(error instanceof Error ? error : new Error(String(error)));
      return true;
    }
  }

  async release(target: string): Promise<void> {
    if (!this.#owned.delete(target)) return;
    try {
      await this.#commands.eval(RELEASE, 1, PREFIX + 'lease:' + target, this.instanceId);
    } catch (error) {
      // The lease expires by itself; another relay takes over after its TTL.
      this.#fail(error instanceof Error ? error : new Error(String(error)));
    }
  }

  share(target: string, payload: string): void {
    this.#commands
      .publish(PREFIX + 'result:' + target, `${this.instanceId} ${payload}`)
      .catch((error: unknown) => {
        this.#fail(error instanceof Error ? error : new Error(String(error)));
      });
  }

  follow(target: string, onResult: (payload: string) => void): void {
    if (this.#followers.has(target)) return;
    this.#followers.set(target, onResult);
    this.#subscriber.subscribe(PREFIX + 'result:' + target).catch((error: unknown) => {
      this.#fail(error instanceof Error ? error : new Error(String(error)));
    });
  }

  unfollow(target: string): void {
    if (!this.#followers.delete(target)) return;
    this.#subscriber.unsubscribe(PREFIX + 'result:' + target).catch(() => {
      // Unsubscribing from a dead connection: nothing to undo.
    });
  }

  status(): CoordinatorStatus {
    return {
      mode: 'redis',
      connected: this.#connected,
      owned: this.#owned.size,
      followed: this.#followers.size,
      lastError: this.#lastError,
    };
  }

  /** Releases every lease this relay holds (docs/operations.md "Shutdown"), then disconnects. */
  async close(): Promise<void> {
    await Promise.all([...this.#owned].map((target) => this.release(target)));
    this.#followers.clear();
    this.#commands.disconnect();
    this.#subscriber.disconnect();
  }

  #onMessage(channel: string, message: string): void {
    const target = channel.slice((PREFIX + 'result:').length);
    const separator = message.indexOf(' ');
    // Our own results come back to us on the channel we follow: they were applied already.
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
