/**
 * @module relay/coordination/redis/stream-log
 * Cluster-wide streams in Redis (docs/cluster.md "Cluster-wide streams"): per poll target its last
 * state with each stream's position (the next lease holder continues from it: same epoch, next
 * `seq`), per stream a Redis Stream of its recent updates capped by length and age (any relay
 * resumes a client from it), and the sharded channel on which followers receive each poll's
 * messages. Every write is fenced: it runs in one Lua script that first checks the writer's lease
 * token (relay/coordination/redis/stream-scripts.ts).
 */
import type { RedisClient } from './connection.ts';
import type { RedisFormats } from './formats.ts';
import { targetKeys } from './keys.ts';
import { encodeBatch, encodeClosed, type WrittenEntry } from './stream-batch.ts';

/** `unavailable`: Redis could not be asked (or this relay polls without a lease: Redis was away). */
export type WriteOutcome = 'written' | 'fenced' | 'unavailable';

export interface StreamPosition {
  epoch: string;
  seq: number;
}

/** A target as the last holder left it. */
export interface StoredTarget {
  /** The fencing token of the lease that wrote it. */
  token: number;
  /** The target's last state, JSON (validated by the reader: nothing read back is trusted). */
  state: string;
  /** The times of the upstream response that produced the state (a poll that only confirmed it keeps them). */
  ts: string;
  rts: string;
  positions: ReadonlyMap<string, StreamPosition>;
  /** Whether it is in the format this relay writes (else the next holder writes it again, whole). */
  ownFormat: boolean;
}

/** One logged update: its seq and its message, serialised. */
export interface LoggedUpdate {
  seq: number;
  text: string;
}

export interface LoadedTarget {
  /** Undefined when the state is gone (never written, expired, or the market closed) or unreadable. */
  stored: StoredTarget | undefined;
  /** The state is there but in a format this relay does not read (a newer relay's): not to continue. */
  unreadable: boolean;
  /** Per stream asked for: its logged updates after the seq asked, oldest first. */
  history: ReadonlyMap<string, LoggedUpdate[]>;
}

export interface PollWrite {
  /** The target's new state, JSON; undefined when the poll changed nothing. */
  state: string | undefined;
  ts: string;
  rts: string;
  receivedAt: number;
}

export interface StreamLog {
  /**
   * This relay's fencing token for `target` as of its last claim; undefined when it polls the
   * target without a lease (Redis was away when it asked).
   */
  token(target: string): number | undefined;
  /** Writes one poll's messages and publishes them to followers, if the lease is still ours. */
  commit(target: string, poll: PollWrite, entries: readonly WrittenEntry[]): Promise<WriteOutcome>;
  /** The market is gone upstream: forget its streams and tell the followers. */
  close(target: string, streams: readonly string[]): Promise<WriteOutcome>;
  /** The target's stored state and, per stream asked, its updates after `afterSeq`; undefined: Redis away. */
  load(
    target: string,
    history: readonly { stream: string; afterSeq: number }[],
  ): Promise<LoadedTarget | undefined>;
}

export interface RedisStreamLogOptions {
  redis: RedisClient;
  instanceId: string;
  tokenOf: (target: string) => number | undefined;
  /** Updates kept per stream (`--resume-buffer`). */
  historyLength: number;
  /** How long an update is kept (`--history-ms`). */
  historyMs: number;
  /** The format written, and those read (relay/coordination/redis/formats.ts). */
  formats: RedisFormats;
  onError: (error: Error) => void;
}

/**
 * A target's state outlives its last write by this much at least: long enough for any failover,
 * and a stream nobody polled for that long has no client left to resume it.
 */
const STATE_MIN_TTL_MS = 10 * 60_000;

/** How long a target's state outlives its last write. */
function targetLifetimeMs(historyMs: number): number {
  return Math.max(historyMs, STATE_MIN_TTL_MS);
}

export class RedisStreamLog implements StreamLog {
  readonly #options: RedisStreamLogOptions;

  constructor(options: RedisStreamLogOptions) {
    this.#options = options;
  }

  token(target: string): number | undefined {
    return this.#options.tokenOf(target);
  }

  async commit(target: string, poll: PollWrite, entries: readonly WrittenEntry[]): Promise<WriteOutcome> {
    const token = this.token(target);
    if (token === undefined) return 'unavailable';
    const keys = targetKeys(target);
    const { historyLength, historyMs, instanceId, formats } = this.#options;
    const [state, history] = [formats.writer('state'), formats.writer('history')];
    const args = [
      this.#lease(token),
      String(historyLength),
      String(historyMs),
      String(targetLifetimeMs(historyMs)),
      keys.channel,
      formats.payload(instanceId, encodeBatch(token, poll, entries)),
      poll.state === undefined ? '' : state.encode('state', poll.state),
      poll.ts,
      poll.rts,
      String(token),
      String(state.version),
      String(history.version),
    ];
    for (const entry of entries)
      args.push(
        entry.stream,
        `${entry.epoch} ${entry.seq}`,
        entry.kind,
        entry.text === undefined ? '' : history.encode('history', entry.text),
      );
    const histories = entries.map((entry) => keys.history(entry.stream));
    return this.#write('relayCommit', [keys.lease, keys.state, ...histories], args);
  }

  async close(target: string, streams: readonly string[]): Promise<WriteOutcome> {
    const token = this.token(target);
    if (token === undefined) return 'unavailable';
    const keys = targetKeys(target);
    const { instanceId, formats } = this.#options;
    return this.#write(
      'relayClose',
      [keys.lease, keys.state, ...streams.map((stream) => keys.history(stream))],
      [this.#lease(token), keys.channel, formats.payload(instanceId, encodeClosed(token))],
    );
  }

  async load(
    target: string,
    history: readonly { stream: string; afterSeq: number }[],
  ): Promise<LoadedTarget | undefined> {
    const keys = targetKeys(target);
    let answer: unknown;
    try {
      answer = await this.#options.redis.relayLoad(
        1 + history.length,
        keys.state,
        ...history.map((wanted) => keys.history(wanted.stream)),
        ...history.flatMap((wanted) => [wanted.stream, String(wanted.afterSeq)]),
        String(this.#options.historyLength),
      );
    } catch (error) {
      this.#options.onError(asError(error));
      return undefined;
    }
    const [hash, ...entries] = answer as [string[], ...[string, string[]][][]];
    const { formats } = this.#options;
    const loaded = new Map(
      history.map((wanted, i) => [wanted.stream, loggedUpdates(formats, entries[i] ?? [])]),
    );
    const stored = storedTarget(formats, hash);
    return {
      stored: stored === 'unreadable' ? undefined : stored,
      unreadable: stored === 'unreadable',
      history: loaded,
    };
  }

  /** The lease as this relay writes it under `token` (relay/coordination/redis/stream-scripts.ts CLAIM). */
  #lease(token: number): string {
    return `${this.#options.instanceId} ${token} ${this.#options.formats.written.version}`;
  }

  async #write(script: 'relayCommit' | 'relayClose', keys: string[], args: string[]): Promise<WriteOutcome> {
    try {
      const written = await this.#options.redis[script](keys.length, ...keys, ...args);
      return written === 1 ? 'written' : 'fenced';
    } catch (error) {
      this.#options.onError(asError(error));
      return 'unavailable';
    }
  }
}

/** The fields of the state hash that are not a stream's position. */
const TARGET_FIELDS = ['state', 'ts', 'rts', 'token', 'format'];

function storedTarget(formats: RedisFormats, flat: string[]): StoredTarget | 'unreadable' | undefined {
  const fields = new Map<string, string>();
  for (let i = 0; i + 1 < flat.length; i += 2) fields.set(flat[i]!, flat[i + 1]!);
  const text = fields.get('state');
  if (text === undefined) return undefined;
  const version = fields.get('format');
  const format = formats.reader('state', version);
  const state = format?.decode('state', text);
  if (state === undefined) return 'unreadable';
  const token = Number(fields.get('token'));
  if (!Number.isSafeInteger(token)) return undefined;
  const positions = new Map<string, StreamPosition>();
  for (const [field, value] of fields) {
    const match = /^(\S+) (\d+)$/.exec(value);
    if (match !== null && !TARGET_FIELDS.includes(field))
      positions.set(field, { epoch: match[1]!, seq: Number(match[2]) });
  }
  const ownFormat = format === formats.writer('state');
  return { token, state, ts: fields.get('ts') ?? '', rts: fields.get('rts') ?? '', positions, ownFormat };
}

/**
 * XREVRANGE's answer (newest first) as updates oldest first. An entry of a format not read here is
 * left out: the gap it leaves makes the history unusable (relay/coordination/redis/codecs.ts), so a
 * stream starts over from a snapshot rather than skip an update.
 */
function loggedUpdates(formats: RedisFormats, entries: [string, string[]][]): LoggedUpdate[] {
  const updates: LoggedUpdate[] = [];
  for (let i = entries.length - 1; i >= 0; i--) {
    const fields = entries[i]![1];
    const field = (name: string) => {
      const at = fields.indexOf(name);
      return at < 0 ? undefined : fields[at + 1];
    };
    const seq = Number(field('seq'));
    const text = field('msg');
    if (!Number.isSafeInteger(seq) || text === undefined) continue;
    const decoded = formats.reader('history', field('format'))?.decode('history', text);
    if (decoded !== undefined) updates.push({ seq, text: decoded });
  }
  return updates;
}

export function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
