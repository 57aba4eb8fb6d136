/**
 * @module history/duckdb-store
 * The embedded history store: one DuckDB database file in `--data-dir`, needing no set-up. DuckDB
 * because it is a real store that runs in the process (nothing to install or run beside the relay),
 * appends batches fast through its Appender, compresses each column on its own (`data` with zstd
 * across a whole segment of messages, the envelope with dictionaries, times and `seq` with bit
 * packing: the record takes about 0.12x its messages' JSON once checkpointed, docs/operations.md
 * "History disk"), answers a time range of one stream from its zone maps, and writes Parquet itself
 * (`COPY`). Every write goes through one connection in order; every read has a connection of its
 * own and streams its result a chunk at a time. Times are kept as epoch milliseconds, with the text
 * as sent beside them only where it is not the millisecond ISO form those give back (an upstream
 * `ts` of another precision).
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { promisify } from 'node:util';
import { deflateRaw, inflateRaw } from 'node:zlib';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { appendRow, parseSize, recordOf } from './duckdb-rows.ts';
import type {
  HistoryExtent,
  HistoryRange,
  HistoryStore,
  HistoryStoreStats,
  RecordedMessage,
  RetentionPolicy,
} from './store.ts';

const deflate = promisify(deflateRaw);
const inflate = promisify(inflateRaw);

/** The database file's name inside `--data-dir`. */
export const HISTORY_FILE = 'history.duckdb';

/**
 * The storage format of a new store file: DuckDB's own, of the engine version the project installs,
 * whose zstd compression of a text column is what `data` asks for (the default format, kept readable
 * by engines back to 0.10, has no zstd for text, and its FSST leaves a whole segment uncompressed
 * once one of its strings is large).
 */
const STORAGE_VERSION = 'v1.5.0';

/**
 * What marks a store file whose `data` is zstd-compressed (made by this version): the table's
 * comment. A file made before it keeps its `data` column as it was made, so that its large texts
 * are still written deflated ({@link LARGE_DATA_BYTES}).
 */
const ZSTD_FORMAT = 'data: zstd';

/**
 * In a store made before {@link ZSTD_FORMAT}, `data` of at least this many bytes is stored deflated
 * (by zlib, off the event loop) rather than as text: that file's string compression (FSST) leaves a
 * whole segment uncompressed once one of its strings is this large (a catalogue's or a trade list's
 * snapshot), which would cost the small messages beside it their compression too.
 */
const LARGE_DATA_BYTES = 2_048;

/**
 * Rows appended in one turn of the event loop: about 0.5 ms of it on a loaded machine, where a
 * second's 500 rows of busy books at once held it for about 2 ms more (the closing flush of the
 * appender, a millisecond or two, stays one piece).
 */
const APPEND_SLICE_ROWS = 128;

/** The oldest rows dropped in one step while the store is over its byte limit. */
const SIZE_TRIM_FRACTION = 0.1;

const SCHEMA = `CREATE TABLE IF NOT EXISTS messages (
  channel VARCHAR NOT NULL,
  stream VARCHAR NOT NULL,
  market VARCHAR NOT NULL,
  depth INTEGER,
  epoch VARCHAR NOT NULL,
  seq BIGINT NOT NULL,
  ts_ms BIGINT NOT NULL,
  rts_ms BIGINT NOT NULL,
  ts_text VARCHAR,
  rts_text VARCHAR,
  type VARCHAR NOT NULL,
  data VARCHAR USING COMPRESSION zstd,
  data_deflated BLOB,
  checksum UINTEGER,
  group_step VARCHAR
)`;

const COLUMNS =
  'channel, stream, market, depth, epoch, seq::DOUBLE, ts_ms::DOUBLE, rts_ms::DOUBLE, ts_text, rts_text, type, data, data_deflated, checksum, group_step';
const IN_RANGE = 'stream = $stream AND rts_ms >= $from AND rts_ms < $to';

/** A store file that exists but cannot be opened as one (corrupt, another program's, another version). */
export class HistoryStoreOpenError extends Error {
  constructor(file: string, cause: unknown) {
    super(
      `history store ${file} cannot be opened (${cause instanceof Error ? cause.message : String(cause)}): move it away or delete it to start a new record, or start with --history off`,
    );
    this.name = 'HistoryStoreOpenError';
  }
}

/** Opens (creating when missing) the store in `dataDir`; a file that is not a store is a HistoryStoreOpenError. */
export async function openDuckDbStore(dataDir: string): Promise<DuckDbHistoryStore> {
  const file = path.join(dataDir, HISTORY_FILE);
  try {
    mkdirSync(dataDir, { recursive: true });
    return new DuckDbHistoryStore(file, await openFile(file));
  } catch (error) {
    throw new HistoryStoreOpenError(file, error);
  }
}

interface OpenedFile {
  instance: DuckDBInstance;
  writer: DuckDBConnection;
  /** `data` is zstd-compressed: every text goes in as text (false: a store made before, see LARGE_DATA_BYTES). */
  zstdData: boolean;
}

async function openFile(file: string): Promise<OpenedFile> {
  // One thread and a modest memory limit: the store shares the process with the relay. The storage
  // version applies to a file created now; one that exists keeps its own.
  const instance = await DuckDBInstance.create(file, {
    threads: '1',
    memory_limit: '256MB',
    storage_compatibility_version: STORAGE_VERSION,
  });
  try {
    const writer = await instance.connect();
    const created =
      (
        await writer.runAndReadAll(
          "SELECT count(*)::DOUBLE FROM duckdb_tables() WHERE table_name = 'messages'",
        )
      ).getRowsJS()[0]?.[0] === 0;
    await writer.run(SCHEMA);
    if (created) await writer.run(`COMMENT ON TABLE messages IS '${ZSTD_FORMAT}'`);
    // A store written before grouped books were recorded has no group column yet.
    await writer.run('ALTER TABLE messages ADD COLUMN IF NOT EXISTS group_step VARCHAR');
    const comment = (
      await writer.runAndReadAll("SELECT comment FROM duckdb_tables() WHERE table_name = 'messages'")
    ).getRowsJS()[0]?.[0];
    return { instance, writer, zstdData: comment === ZSTD_FORMAT };
  } catch (error) {
    instance.closeSync();
    throw error;
  }
}

export class DuckDbHistoryStore implements HistoryStore {
  readonly description: string;
  readonly #file: string;
  #instance: DuckDBInstance;
  #writer: DuckDBConnection;
  readonly #zstdData: boolean;
  /** Writes and maintenance, one after another on `#writer`. */
  #queue: Promise<unknown> = Promise.resolve();
  #closed = false;
  /**
   * A write failed (a full or unwritable disk): DuckDB may have invalidated the database, and may
   * still hold the failed transaction's rows. The next write opens the file again first, from what
   * was committed, so recording resumes once the disk can take it.
   */
  #failed = false;
  /**
   * The rows held and the oldest `rts`, kept up to date by each write: counting them from the table
   * every few seconds (for /health and /metrics) costs a scan of the whole record, tens of
   * milliseconds once it holds a day. Undefined: read from the table at the next `stats`, as after
   * opening the file, a retention run that dropped rows, or a failed write.
   */
  #held: { rows: number; oldest: number | undefined } | undefined;

  constructor(file: string, opened: OpenedFile) {
    this.description = `duckdb:${file}`;
    this.#file = file;
    this.#instance = opened.instance;
    this.#writer = opened.writer;
    this.#zstdData = opened.zstdData;
  }

  append(batch: readonly RecordedMessage[]): Promise<void> {
    return this.#serially(async () => {
      if (batch.length === 0) return;
      // The rows go into an open transaction in memory (the Appender's calls are synchronous), and
      // the commit, which writes and syncs the log, runs on DuckDB's own thread: the event loop
      // never waits on the disk.
      const deflated = this.#zstdData
        ? []
        : await Promise.all(
            batch.map((row) => (row.data.length >= LARGE_DATA_BYTES ? deflate(row.data) : undefined)),
          );
      let oldest = Number.POSITIVE_INFINITY;
      await this.#writer.run('BEGIN TRANSACTION');
      try {
        const appender = await this.#writer.createAppender('messages');
        try {
          // A slice of rows at a time, the event loop served between slices: a second's batch of
          // busy books appended at once would hold it for milliseconds (the relay's p99 delay).
          for (let start = 0; start < batch.length; start += APPEND_SLICE_ROWS) {
            if (start > 0) await nextTurn();
            const end = Math.min(batch.length, start + APPEND_SLICE_ROWS);
            for (let i = start; i < end; i += 1)
              oldest = Math.min(oldest, appendRow(appender, batch[i] as RecordedMessage, deflated[i]));
          }
        } finally {
          appender.closeSync();
        }
        await this.#writer.run('COMMIT');
        if (this.#held !== undefined) {
          this.#held.rows += batch.length;
          this.#held.oldest = Math.min(this.#held.oldest ?? oldest, oldest);
        }
      } catch (error) {
        // Nothing of a batch that failed is kept half-written.
        await this.#writer.run('ROLLBACK').catch(() => undefined);
        throw error;
      }
    });
  }

  async *read(range: HistoryRange): AsyncIterable<RecordedMessage> {
    this.#open();
    const connection = await this.#instance.connect();
    try {
      const result = await connection.stream(
        `SELECT ${COLUMNS} FROM messages WHERE ${IN_RANGE} ORDER BY rts_ms, seq`,
        { stream: range.stream, from: range.from, to: range.to },
      );
      for await (const rows of result.yieldRowsJs()) for (const row of rows) yield recordOf(row);
    } finally {
      connection.closeSync();
    }
  }

  async writeParquet(range: HistoryRange, file: string): Promise<void> {
    this.#open();
    const connection = await this.#instance.connect();
    const values = { stream: range.stream, from: range.from, to: range.to };
    try {
      // The range in a temporary table, its deflated `data` inflated back into text, then written
      // by DuckDB: the message's own fields as columns, `data` its JSON text (read as a string).
      await connection.run(
        `CREATE TEMP TABLE export AS
         SELECT row_number() OVER (ORDER BY rts_ms, seq) AS n, channel, market, depth, group_step, epoch, seq,
                make_timestamp(ts_ms * 1000) AS ts, make_timestamp(rts_ms * 1000) AS rts, type, data,
                data_deflated, checksum
         FROM messages WHERE ${IN_RANGE}`,
        values,
      );
      const large = await connection.stream('SELECT n::DOUBLE, data_deflated FROM export WHERE data IS NULL');
      for await (const rows of large.yieldRowsJs())
        for (const [n, deflated] of rows)
          await connection.run('UPDATE export SET data = $data WHERE n = $n', {
            n: Number(n),
            data: (await inflate(deflated as Uint8Array)).toString('utf8'),
          });
      await connection.run(
        `COPY (SELECT channel, market, depth, group_step AS "group", epoch, seq, ts, rts, type, data, checksum FROM export ORDER BY n)
         TO '${file.replaceAll("'", "''")}' (FORMAT parquet, COMPRESSION zstd)`,
      );
    } finally {
      connection.closeSync();
    }
  }

  async extent(stream: string): Promise<HistoryExtent | undefined> {
    const [row] = await this.#rows(
      'SELECT min(rts_ms)::DOUBLE, max(rts_ms)::DOUBLE, count(*)::DOUBLE FROM messages WHERE stream = $stream',
      { stream },
    );
    const [oldest, newest, rows] = row ?? [];
    if (typeof oldest !== 'number' || typeof newest !== 'number') return undefined;
    return { oldest, newest, rows: Number(rows) };
  }

  async lastSnapshot(stream: string, at: number): Promise<number | undefined> {
    const [row] = await this.#rows(
      "SELECT max(rts_ms)::DOUBLE FROM messages WHERE stream = $stream AND type = 'snapshot' AND rts_ms <= $at",
      { stream, at },
    );
    const [last] = row ?? [];
    return typeof last === 'number' ? last : undefined;
  }

  enforceRetention(policy: RetentionPolicy, now: number): Promise<number> {
    return this.#serially(async () => {
      let dropped = (
        await this.#writer.run('DELETE FROM messages WHERE rts_ms < $cut', { cut: now - policy.maxAgeMs })
      ).rowsChanged;
      // Over its bytes: drop the oldest tenth at a time, checkpointing so the freed blocks count as free.
      for (let step = 0; step < 10 && (await this.#usedBytes()) > policy.maxBytes; step += 1) {
        const { rows } = await this.#countHeld();
        if (rows === 0) break;
        const cut = await this.#writer.runAndReadAll(
          'SELECT rts_ms::DOUBLE FROM messages ORDER BY rts_ms LIMIT 1 OFFSET $skip',
          { skip: Math.max(0, Math.ceil(rows * SIZE_TRIM_FRACTION) - 1) },
        );
        const until = cut.getRowsJS()[0]?.[0];
        if (typeof until !== 'number') break;
        dropped += (await this.#writer.run('DELETE FROM messages WHERE rts_ms <= $until', { until }))
          .rowsChanged;
        await this.#writer.run('CHECKPOINT');
      }
      if (dropped > 0) {
        this.#held = undefined;
        await this.#writer.run('CHECKPOINT');
      }
      return dropped;
    });
  }

  stats(): Promise<HistoryStoreStats> {
    return this.#serially(async () => {
      this.#held ??= await this.#countHeld();
      return { rows: this.#held.rows, oldest: this.#held.oldest, bytes: await this.#usedBytes() };
    });
  }

  /** Folds the write-ahead log into the database file now, rather than when DuckDB's log has grown to 16 MB. */
  checkpoint(): Promise<void> {
    return this.#serially(async () => {
      await this.#writer.run('CHECKPOINT');
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    await this.#queue.catch(() => undefined);
    this.#closed = true;
    try {
      // Folds the write-ahead log into the file; committed rows are durable without it.
      if (!this.#failed) await this.#writer.run('CHECKPOINT');
    } catch {
      // A disk too full to checkpoint keeps the log, which the next open replays.
    } finally {
      this.#writer.closeSync();
      this.#instance.closeSync();
    }
  }

  /** Bytes of the blocks in use and of the write-ahead log not yet checkpointed. */
  async #usedBytes(): Promise<number> {
    const reader = await this.#writer.runAndReadAll(
      'SELECT (used_blocks * block_size)::DOUBLE, wal_size FROM pragma_database_size()',
    );
    const [used, wal] = reader.getRowsJS()[0] ?? [];
    return Number(used ?? 0) + parseSize(String(wal ?? '0'));
  }

  async #countHeld(): Promise<{ rows: number; oldest: number | undefined }> {
    const reader = await this.#writer.runAndReadAll(
      'SELECT count(*)::DOUBLE, min(rts_ms)::DOUBLE FROM messages',
    );
    const [rows, oldest] = reader.getRowsJS()[0] ?? [];
    return { rows: Number(rows ?? 0), oldest: typeof oldest === 'number' ? oldest : undefined };
  }

  async #rows(sql: string, values?: Record<string, string | number>): Promise<unknown[][]> {
    this.#open();
    const connection = await this.#instance.connect();
    try {
      return (await connection.runAndReadAll(sql, values)).getRowsJS();
    } finally {
      connection.closeSync();
    }
  }

  #serially<T>(work: () => Promise<T>): Promise<T> {
    if (this.#closed) return Promise.reject(new Error('history store is closed'));
    const guarded = async (): Promise<T> => {
      if (this.#failed) await this.#reopen();
      try {
        return await work();
      } catch (error) {
        this.#failed = true;
        this.#held = undefined;
        throw error;
      }
    };
    const next = this.#queue.then(guarded, guarded);
    this.#queue = next.catch(() => undefined);
    return next;
  }

  async #reopen(): Promise<void> {
    try {
      this.#writer.closeSync();
      this.#instance.closeSync();
    } catch {
      // An invalidated database may refuse to close cleanly; the file is opened again regardless.
    }
    ({ instance: this.#instance, writer: this.#writer } = await openFile(this.#file));
    this.#failed = false;
  }

  #open(): void {
    if (this.#closed) throw new Error('history store is closed');
  }
}
