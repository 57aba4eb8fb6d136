/**
 * @module history/recorder
 * Records what the relay sends without ever making the fan-out wait for the store: `record` only
 * puts a message in a buffer; a timer hands the buffer to the store every `flushMs` (the flush
 * window: a relay killed with SIGKILL loses at most that much, docs/history.md "Durability"), and
 * every `retentionMs` the store drops what its retention no longer keeps. A write that fails (a
 * full or unwritable disk) is counted and its batch dropped, and the next flush tries again, so
 * recording resumes by itself when space returns; live serving never notices. The buffer is bounded:
 * past `maxPending` messages waiting, the newest are dropped and counted.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { HistoryStore, HistoryStoreStats, RecordedMessage, RetentionPolicy } from './store.ts';

/** How soon `flushSoon` writes: messages of the same moment (a poll's) join the write. */
const SOON_MS = 50;

/** Messages read into the store's form in one turn of the event loop (about 0.2 ms of it). */
const RECORDS_PER_TURN = 256;

/**
 * Where the recorder keeps messages until the next flush. A flush window holds thousands of them,
 * so how they are kept is the recorder's cost: an item kept as a JavaScript object lives through
 * several of the collector's young-generation passes and is copied into the old generation, which
 * then has to be marked and swept too (history/sent-arena.ts keeps them as bytes instead).
 */
export interface PendingBuffer<Item> {
  readonly length: number;
  push(item: Item): void;
  /** Hands over what is buffered, in order, and starts empty again. */
  take(): PendingBatch;
}

/** A flush's messages, read into the store's form one at a time, off the fan-out path. */
export interface PendingBatch {
  readonly length: number;
  record(index: number): RecordedMessage;
  /** The batch is written or dropped: what it holds may be used again. */
  release(): void;
}

/** A buffer of items kept as they are, each read into the store's form by `toRecord` at flush time. */
export function listBuffer<Item>(toRecord: (item: Item) => RecordedMessage): PendingBuffer<Item> {
  let items: Item[] = [];
  return {
    get length() {
      return items.length;
    },
    push(item) {
      items.push(item);
    },
    take() {
      const taken = items;
      items = [];
      return { length: taken.length, record: (index) => toRecord(taken[index] as Item), release() {} };
    },
  };
}

export interface RecorderOptions<Item> {
  store: HistoryStore;
  /** Where messages wait for the next flush. */
  buffer: PendingBuffer<Item>;
  flushMs: number;
  retention: RetentionPolicy;
  /** How often retention is enforced (ms). */
  retentionMs: number;
  maxPending: number;
  /** How often what the store holds is read again for `stats` (ms). */
  statsMs: number;
  now?: () => number;
  /** A write failed, or succeeded again after failing (for the log). */
  onWriteState?: (failing: boolean, error?: unknown) => void;
}

/** What the recorder did, for the metrics and `/health`. */
export interface RecorderStats {
  /** Messages written since start. */
  written: number;
  /** Writes that failed since start. */
  writeFailures: number;
  /** Messages lost: in a failed write, or past the buffer's bound. */
  dropped: number;
  /** Whether the last write failed. */
  failing: boolean;
  /**
   * Whether the store answered its last call (a write, or the read of what it holds): false while
   * a shared engine cannot be reached, or an embedded store's file cannot be read or written.
   */
  reachable: boolean;
  /** Messages waiting for the next flush. */
  pending: number;
  /** How long the oldest message of the last write waited in the buffer (ms). */
  writeLagMs: number;
  /** The last write error's text, while failing. */
  lastError: string | undefined;
  /** What the store held when last asked (every `statsMs`). */
  stored: HistoryStoreStats;
}

/** What readers of the record (the export, `/health`, the metrics) see of the recorder, whatever it buffers. */
export interface RecordReader {
  readonly store: HistoryStore;
  readonly retention: RetentionPolicy;
  readonly flushMs: number;
  /** Writes what is buffered now. */
  flush(): Promise<void>;
  stats(): RecorderStats;
}

export class HistoryRecorder<Item> implements RecordReader {
  readonly store: HistoryStore;
  readonly retention: RetentionPolicy;
  readonly flushMs: number;
  readonly #options: RecorderOptions<Item>;
  readonly #now: () => number;
  readonly #pending: PendingBuffer<Item>;
  #oldestPendingAt = 0;
  #flushing: Promise<void> | undefined;
  #flushTimer: NodeJS.Timeout | undefined;
  #retentionTimer: NodeJS.Timeout | undefined;
  #statsTimer: NodeJS.Timeout | undefined;
  #soonTimer: NodeJS.Timeout | undefined;
  #stats: RecorderStats = {
    written: 0,
    writeFailures: 0,
    dropped: 0,
    failing: false,
    reachable: true,
    pending: 0,
    writeLagMs: 0,
    lastError: undefined,
    stored: { rows: 0, bytes: 0, oldest: undefined },
  };

  constructor(options: RecorderOptions<Item>) {
    this.#options = options;
    this.store = options.store;
    this.retention = options.retention;
    this.flushMs = options.flushMs;
    this.#now = options.now ?? Date.now;
    this.#pending = options.buffer;
  }

  start(): void {
    this.#flushTimer = setInterval(() => void this.flush(), this.#options.flushMs);
    this.#flushTimer.unref();
    this.#retentionTimer = setInterval(() => void this.enforceRetention(), this.#options.retentionMs);
    this.#retentionTimer.unref();
    this.#statsTimer = setInterval(() => void this.refreshStats(), this.#options.statsMs);
    this.#statsTimer.unref();
    void this.refreshStats();
  }

  /** Takes one sent message; never waits and never throws. */
  record(item: Item): void {
    if (this.#pending.length >= this.#options.maxPending) {
      this.#stats.dropped += 1;
      return;
    }
    if (this.#pending.length === 0) this.#oldestPendingAt = this.#now();
    try {
      this.#pending.push(item);
    } catch {
      // The buffer could not grow (memory): the message is lost and counted, serving goes on.
      this.#stats.dropped += 1;
    }
  }

  /**
   * Writes what is buffered within {@link SOON_MS} rather than at the end of the flush window (one
   * such write at a time): for a message that little else in the record can stand in for once lost.
   */
  flushSoon(): void {
    if (this.#soonTimer !== undefined) return;
    this.#soonTimer = setTimeout(() => {
      this.#soonTimer = undefined;
      void this.flush();
    }, SOON_MS);
    this.#soonTimer.unref();
  }

  /** Writes what is buffered now (one write at a time; a flush during a write waits for it). */
  async flush(): Promise<void> {
    while (this.#flushing !== undefined) await this.#flushing;
    if (this.#pending.length === 0) return;
    const batch = this.#pending.take();
    const since = this.#oldestPendingAt;
    this.#flushing = this.#write(batch, since).finally(() => {
      this.#flushing = undefined;
    });
    await this.#flushing;
  }

  async #write(batch: PendingBatch, since: number): Promise<void> {
    try {
      await this.store.append(await this.#records(batch));
      this.#stats.written += batch.length;
      this.#stats.writeLagMs = this.#now() - since;
      if (this.#stats.failing) this.#options.onWriteState?.(false);
      this.#stats.failing = false;
      this.#stats.reachable = true;
      this.#stats.lastError = undefined;
    } catch (error) {
      this.#stats.writeFailures += 1;
      this.#stats.dropped += batch.length;
      if (!this.#stats.failing) this.#options.onWriteState?.(true, error);
      this.#stats.failing = true;
      this.#stats.reachable = false;
      this.#stats.lastError = error instanceof Error ? error.message : String(error);
    } finally {
      batch.release();
    }
  }

  /**
   * The items in the store's form, a slice per turn of the event loop: a flush window's thousands
   * of messages read at once would hold the loop for milliseconds, as the stores' appends would.
   */
  async #records(batch: PendingBatch): Promise<RecordedMessage[]> {
    const records: RecordedMessage[] = [];
    for (let start = 0; start < batch.length; start += RECORDS_PER_TURN) {
      if (start > 0) await nextTurn();
      const end = Math.min(batch.length, start + RECORDS_PER_TURN);
      for (let i = start; i < end; i += 1) records.push(batch.record(i));
    }
    return records;
  }

  /** Drops what the retention no longer keeps; a failure is counted like a failed write. */
  async enforceRetention(): Promise<void> {
    try {
      await this.store.enforceRetention(this.retention, this.#now());
    } catch (error) {
      this.#stats.writeFailures += 1;
      this.#stats.lastError = error instanceof Error ? error.message : String(error);
    }
  }

  stats(): RecorderStats {
    return { ...this.#stats, pending: this.#pending.length };
  }

  /** Reads what the store holds again; a store that cannot say keeps the last figures. */
  async refreshStats(): Promise<void> {
    try {
      this.#stats.stored = await this.store.stats();
      this.#stats.reachable = true;
    } catch {
      // A failing store is counted by its writes; the figures stay the last it gave.
      this.#stats.reachable = false;
    }
  }

  /** Stops the timers, writes what is buffered and closes the store. */
  async close(): Promise<void> {
    clearInterval(this.#flushTimer);
    clearInterval(this.#retentionTimer);
    clearInterval(this.#statsTimer);
    clearTimeout(this.#soonTimer);
    await this.flush();
    await this.store.close();
  }
}
