/**
 * @module relay/coordination/redis/coordinator
 * Cluster mode over Redis: a lease per poll target (renewed by its holder on every poll, released
 * on unsubscribe and shutdown), each new lease with a fencing token one higher than the last, and
 * the stream log (relay/coordination/redis/stream-log.ts) through which the holder writes each poll's messages once
 * for the cluster. Followers receive them on the target's sharded channel and serve them as they are.
 */
import { randomBytes } from 'node:crypto';
import { Cluster } from 'ioredis';
import type { BrokerStatus } from '../broker.ts';
import { keepShardedSubscriptions, openRedis, type RedisClient, type RedisTopology } from './connection.ts';
import { RedisFormats, splitPayload } from './formats.ts';
import { targetKeys } from './keys.ts';
import { EVEN_WEIGHT, nextWeight, PollCostMeter, type RelayWeight } from './leases/relay-weight.ts';
import { preferredRelay } from './leases/rendezvous.ts';
import { announce, leaveRoster, NO_ROSTER, type Roster } from './leases/roster.ts';
import { OutageErrors, type OutageSummary } from './outage-errors.ts';
import { ShareDemand } from './share-demand.ts';
import { isBatchPayload } from './stream-batch.ts';
import { asError, RedisStreamLog } from './stream-log.ts';

export interface RedisCoordinatorOptions {
  /** One Redis or a Redis Cluster (relay/coordination/redis/connection.ts). */
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
  /**
   * How often this relay says it is alive and learns which relays are (`--rebalance-ms`): leases
   * move to the relay rendezvous hashing picks among them. A relay silent for 3 of these is gone.
   */
  rebalanceMs?: number;
  /** The format written and those read (relay/coordination/redis/formats.ts): the shipped ones unless given. */
  formats?: RedisFormats;
}

/**
 * A target's fencing counter outlives the lease that took its last token by this many lease TTLs:
 * hand-overs in a row (a failover, a rebalance, a restart) count on from it. Tokens never need it
 * for longer: a counter gone starts again from Redis's clock in microseconds, above every token it
 * handed out (one per hand-over, far fewer than a microsecond each), as it does after a Redis that
 * lost its data. A counter kept as long as the state (10 minutes) held one key for every REST path,
 * candle series and market leased in the last 10 minutes, most long let go.
 */
const COUNTER_LEASES = 2;

export class RedisCoordinator {
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
  /**
   * Targets whose holder writes a format this relay does not read (a newer relay during an upgrade),
   * with when it last did: this relay polls them itself meanwhile, in an epoch of its own.
   */
  readonly #unreadableHolders = new Map<string, number>();
  readonly #onError: (error: Error) => void;
  readonly #onRecover: (summary: OutageSummary) => void;
  readonly #outage = new OutageErrors();
  #lastError: string | undefined;
  #closed = false;
  #roster: Roster = NO_ROSTER;
  /** This relay's weight, announced with the next announcement (relay/coordination/redis/leases/relay-weight.ts). */
  #weight: RelayWeight = EVEN_WEIGHT;
  /** CPU spent numbering polls, and the leases held meanwhile, since the last announcement. */
  readonly #pollCost = new PollCostMeter();
  /** When Redis last answered again after an outage. */
  #recoveredAt: number | undefined;
  readonly #announcer: NodeJS.Timeout;
  readonly #rebalanceMs: number;
  readonly log: RedisStreamLog;
  readonly formats: RedisFormats;
  /** Whether a poll's response is shared (the targets held here). */
  readonly shareDemand = new ShareDemand();

  constructor(options: RedisCoordinatorOptions) {
    // Commands fail fast while Redis is away (no offline queue): a claim then answers "poll it
    // yourself" at once instead of stalling the poll loop.
    this.topology = options.topology;
    this.formats = options.formats ?? new RedisFormats();
    this.#commands = openRedis(options.topology, { offlineQueue: false, lazyConnect: true });
    this.#subscriber = openRedis(options.topology, { offlineQueue: true, lazyConnect: true });
    this.#onError = options.onError ?? (() => {});
    this.#onRecover = options.onRecover ?? (() => {});
    for (const connection of [this.#commands, this.#subscriber]) {
      connection.on('error', (error: Error) => this.#fail(error));
      connection.on('ready', () => this.#recoverIfConnected());
    }
    this.#subscriber.on('smessage', (channel: string, message: string) => this.#onMessage(channel, message));
    if (this.#subscriber instanceof Cluster)
      keepShardedSubscriptions(this.#subscriber, this.#channels, () => this.#closed);
    this.#rebalanceMs = options.rebalanceMs ?? 2_000;
    const historyMs = options.historyMs ?? 300_000;
    this.#announcer = setInterval(() => void this.#announce(), this.#rebalanceMs).unref();
    this.log = new RedisStreamLog({
      redis: this.#commands,
      instanceId: this.instanceId,
      tokenOf: (target) => this.#owned.get(target),
      historyLength: options.historyLength ?? 1_000,
      historyMs,
      formats: this.formats,
      onError: (error) => this.#fail(error),
    });
  }

  /** The commands connection, shared with the recording leases (relay/coordination/recording/). */
  get commands(): RedisClient {
    return this.#commands;
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
    if (connected) await this.#announce();
    return connected;
  }

  /** `readsShared`: this relay, following `target`, reads the responses its holder shares. */
  async claim(target: string, ttlMs: number, readsShared = false): Promise<boolean> {
    const keys = targetKeys(target);
    try {
      const [token, asked] = (await this.#commands.relayClaim(
        4,
        keys.lease,
        keys.fence,
        keys.want,
        keys.asked,
        this.instanceId,
        String(ttlMs),
        String(COUNTER_LEASES * ttlMs),
        this.#shouldHold(target) ? '1' : '0',
        this.#mayTakeFree(target) ? '1' : '0',
        String(this.formats.written.version),
        readsShared ? '1' : '0',
      )) as [unknown, unknown];
      this.#recoverIfConnected();
      this.#uncoordinated.delete(target);
      if (typeof token === 'number' && token > 0) this.#owned.set(target, token);
      else this.#owned.delete(target);
      this.shareDemand.learnt(target, this.#owned.has(target) && asked === 1);
      this.#pollCost.holding(this.#owned.size);
      if (this.#owned.has(target)) return true;
      // Its holder's messages cannot be read here: poll it without a lease rather than serve nothing.
      if (!this.#holderUnreadable(target, ttlMs)) return false;
      this.#uncoordinated.add(target);
      return true;
    } catch (error) {
      this.#fail(asError(error));
      // The holder keeps its token through the outage: it numbers the streams on alone and writes
      // them when Redis is back (relay/coordination/redis/target-streams.ts). Any other relay polls without a
      // lease: no token, so nothing it polls now is written to the log.
      if (!this.#owned.has(target)) this.#uncoordinated.add(target);
      return true;
    }
  }

  async release(target: string): Promise<void> {
    this.#uncoordinated.delete(target);
    this.shareDemand.forget(target);
    if (!this.#owned.delete(target)) return;
    this.#pollCost.holding(this.#owned.size);
    try {
      await this.#commands.relayRelease(1, targetKeys(target).lease, this.instanceId);
    } catch (error) {
      // The lease expires by itself; another relay takes over after its TTL.
      this.#fail(asError(error));
    }
  }

  spent(ms: number): void {
    this.#pollCost.spent(ms);
  }

  share(target: string, payload: string): void {
    this.#commands
      .spublish(targetKeys(target).channel, this.formats.payload(this.instanceId, payload))
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
    this.#unreadableHolders.delete(target);
    if (!this.#followers.delete(target)) return;
    this.#channels.delete(targetKeys(target).channel);
    this.#subscriber.sunsubscribe(targetKeys(target).channel).catch(() => {
      // Unsubscribing from a dead connection: nothing to undo.
    });
  }

  status(): BrokerStatus {
    const { relays, leases, pollCpu, ownPollCpu } = this.#roster;
    return {
      mode: 'redis',
      connected: this.#connected,
      owned: this.#owned.size + this.#uncoordinated.size,
      followed: this.#followers.size,
      lastError: this.#lastError,
      relays: relays.length,
      leaseShare: leases === 0 ? 0 : Math.min(1, this.#owned.size / leases),
      pollCpuShare: pollCpu === 0 ? 0 : Math.min(1, ownPollCpu / pollCpu),
    };
  }

  /**
   * Whether this relay is the one weighted rendezvous hashing picks for `target` among the live
   * relays, with the weights they announced. Not
   * known yet (no roster): first come, first served, as a relay alone in the roster would be.
   */
  #shouldHold(target: string): boolean {
    const { relays, weights } = this.#roster;
    return (
      relays.length === 0 ||
      preferredRelay(target, relays, (relay) => weights.get(relay) ?? 1) === this.instanceId
    );
  }

  /**
   * Whether a free lease of `target` may be taken now. Not for a while after an outage unless this
   * relay held it before: its holder then may have numbered its streams on alone and is the only
   * one that can continue them; it reclaims at its next poll once back. A holder that died meanwhile
   * leaves its targets unpolled for this while.
   */
  #mayTakeFree(target: string): boolean {
    if (this.#owned.has(target)) return true;
    // Still in the outage as far as this relay knows: one connection back, the other not yet.
    if (this.#outage.inOutage) return false;
    return this.#recoveredAt === undefined || Date.now() - this.#recoveredAt >= 3 * this.#rebalanceMs;
  }

  /**
   * Whether the holder of `target` wrote in a format not read here lately: within a few lease TTLs
   * (it writes at every poll, a few per TTL), so a holder gone silent is not waited for.
   */
  #holderUnreadable(target: string, ttlMs: number): boolean {
    const at = this.#unreadableHolders.get(target);
    if (at === undefined) return false;
    if (Date.now() - at <= 3 * ttlMs) return true;
    this.#unreadableHolders.delete(target);
    return false;
  }

  async #announce(): Promise<void> {
    if (this.#closed || this.#commands.status !== 'ready') return;
    const own = this.#pollCost.take();
    try {
      const roster = await announce(this.#commands, this.formats, {
        instanceId: this.instanceId,
        leases: this.#owned.size,
        pollCpu: own.pollCpu,
        weight: this.#weight.weight,
        goneAfterMs: 3 * this.#rebalanceMs,
      });
      this.#roster = roster;
      this.#weight = nextWeight(this.#weight, own, { pollCpu: roster.pollCpu, leases: roster.leases });
    } catch (error) {
      this.#fail(asError(error));
    }
  }

  /** Releases every lease this relay holds (docs/operations.md "Shutdown"), then disconnects. */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#announcer);
    await leaveRoster(this.#commands, this.instanceId);
    await Promise.all([...this.#owned.keys()].map((target) => this.release(target)));
    this.#uncoordinated.clear();
    this.#followers.clear();
    this.#channels.clear();
    this.#commands.disconnect();
    this.#subscriber.disconnect();
  }

  #onMessage(channel: string, message: string): void {
    const target = this.#channels.get(channel);
    const payload = splitPayload(message);
    // Our own writes come back to us on the channel we follow: they were applied already.
    if (target === undefined || payload === undefined || payload.writer === this.instanceId) return;
    const format = this.formats.reader('message', payload.version);
    if (format === undefined) {
      this.#unreadableHolders.set(target, Date.now());
      return;
    }
    const text = format.decode('message', payload.text);
    if (text === undefined) return;
    // Only a holder writes batches (any relay polling shares a response): a holder read here again.
    if (isBatchPayload(text)) this.#unreadableHolders.delete(target);
    this.#followers.get(target)?.(text);
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
    this.#recoveredAt = Date.now();
    const summary = this.#outage.recover();
    if (summary !== undefined) this.#onRecover(summary);
    void this.#announce();
  }
}
