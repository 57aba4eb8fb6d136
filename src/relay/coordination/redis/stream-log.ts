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
  ts: string;
  rts: string;
  positions: ReadonlyMap<string, StreamPosition>;
}

/** One logged update: its seq and its message, serialised. */
export interface LoggedUpdate {
  seq: number;
  text: string;
}

export interface LoadedTarget {
  /** Undefined when the state is gone (never written, expired, or the market closed). */
  stored: StoredTarget | undefined;
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
  onError: (error: Error) => void;
}

/**
 * A target's state outlives its last write by this much at least: long enough for any failover,
 * and a stream nobody polled for that long has no client left to resume it.
 */
const STATE_MIN_TTL_MS = 10 * 60_000;

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
    const { historyLength, historyMs, instanceId } = this.#options;
    const args = [
      `${instanceId} ${token}`,
      String(historyLength),
      String(historyMs),
      String(Math.max(historyMs, STATE_MIN_TTL_MS)),
      keys.channel,
      `${instanceId} ${encodeBatch(token, poll, entries)}`,
      poll.state ?? '',
      poll.ts,
      poll.rts,
      String(token),
    ];
    for (const entry of entries)
      args.push(entry.stream, `${entry.epoch} ${entry.seq}`, entry.kind, entry.text ?? '');
    const histories = entries.map((entry) => keys.history(entry.stream));
    return this.#write('relayCommit', [keys.lease, keys.state, ...histories], args);
  }

  async close(target: string, streams: readonly string[]): Promise<WriteOutcome> {
    const token = this.token(target);
    if (token === undefined) return 'unavailable';
    const keys = targetKeys(target);
    const { instanceId } = this.#options;
    return this.#write(
      'relayClose',
      [keys.lease, keys.state, ...streams.map((stream) => keys.history(stream))],
      [`${instanceId} ${token}`, keys.channel, `${instanceId} ${encodeClosed(token)}`],
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
    const loaded = new Map(history.map((wanted, i) => [wanted.stream, loggedUpdates(entries[i] ?? [])]));
    return { stored: storedTarget(hash), history: loaded };
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

function storedTarget(flat: string[]): StoredTarget | undefined {
  const fields = new Map<string, string>();
  for (let i = 0; i + 1 < flat.length; i += 2) fields.set(flat[i]!, flat[i + 1]!);
  const state = fields.get('state');
  const token = Number(fields.get('token'));
  if (state === undefined || !Number.isSafeInteger(token)) return undefined;
  const positions = new Map<string, StreamPosition>();
  for (const [field, value] of fields) {
    const match = /^(\S+) (\d+)$/.exec(value);
    if (match !== null && !['state', 'ts', 'rts', 'token'].includes(field))
      positions.set(field, { epoch: match[1]!, seq: Number(match[2]) });
  }
  return { token, state, ts: fields.get('ts') ?? '', rts: fields.get('rts') ?? '', positions };
}

/** XREVRANGE's answer (newest first) as updates oldest first. */
function loggedUpdates(entries: [string, string[]][]): LoggedUpdate[] {
  const updates: LoggedUpdate[] = [];
  for (let i = entries.length - 1; i >= 0; i--) {
    const fields = entries[i]![1];
    const seq = Number(fields[fields.indexOf('seq') + 1]);
    const text = fields[fields.indexOf('msg') + 1];
    if (Number.isSafeInteger(seq) && text !== undefined) updates.push({ seq, text });
  }
  return updates;
}

export function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
