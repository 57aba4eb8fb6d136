/**
 * @module history/postgres-store
 * The shared history store: PostgreSQL, which every relay of a cluster writes and reads at once
 * (docs/history.md "The shared store", docs/cluster.md "One history for the cluster"). PostgreSQL
 * because it is a server many processes use together safely, with transactions, unique keys for a
 * fenced write, partitions for retention, advisory locks for work one relay does for all, and
 * operators who already run and back it up. A batch goes in through the engine's bulk path, COPY
 * in text form, made a slice of rows per turn of the event loop (a statement of the whole batch
 * built at once cost more CPU and held the loop for the whole batch), into a staging table, then in
 * one INSERT from it in the same transaction, where a message already recorded is skipped by the
 * unique key (ON CONFLICT DO NOTHING): a flush is four round trips whatever its size. Reads page
 * through the (stream, rts_ms, seq, epoch) index a page at a time, holding no connection between
 * pages. Parquet is written by DuckDB in memory from
 * the rows read (history/parquet-export.ts), so the export works from any relay. While the engine
 * is away, every call rejects within the connection timeout: the recorder counts it and live
 * serving never waits for it.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setImmediate as nextTurn } from 'node:timers/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { writeRecordsAsParquet } from './parquet-export.ts';
import { COLUMNS, copyLine, type Row, recordOf, WRITTEN_COLUMNS } from './postgres-rows.ts';
import {
  dropPartition,
  ensurePartitions,
  MESSAGES_TABLE,
  PARTITION_MS,
  partitions,
  SCHEMA_STATEMENTS,
  STAGING_STATEMENT,
  STAGING_TABLE,
  sqlState,
} from './postgres-schema.ts';
import type {
  HistoryExtent,
  HistoryRange,
  HistoryStore,
  HistoryStoreStats,
  RecordedMessage,
  RetentionPolicy,
} from './store.ts';

/**
 * Rows made into COPY's text in one turn of the event loop, as the embedded store appends them: a
 * flush window's 2,000 rows made at once held the loop for over 10 ms.
 */
const COPY_SLICE_ROWS = 128;
/** Rows read in one query of a range. */
const PAGE_ROWS = 2_000;
/** How long a call waits for a connection before it fails (the engine away). */
const CONNECT_TIMEOUT_MS = 3_000;
/** How long one query may take before the call fails. */
const QUERY_TIMEOUT_MS = 30_000;
/** Connections per relay: the writer, a retention run, a read or two. */
const POOL_SIZE = 4;
/** The advisory lock held by the one relay enforcing the cluster's retention at a time: ("mrly", 1). */
const RETENTION_LOCK = [0x6d726c79, 1] as const;
/** The oldest rows deleted in one step when the newest hour alone is over the byte limit. */
const SIZE_TRIM_FRACTION = 0.1;
/** Under this many rows (by the planner's estimate) the stats count them exactly. */
const EXACT_COUNT_BELOW = 200_000;
/** SQLSTATE of a row whose hour has no partition (dropped by retention meanwhile). */
const NO_PARTITION = '23514';
/** SQLSTATEs that say the URL is wrong (no such database, bad password, not allowed), not that the engine is away. */
const REFUSED = new Set(['28P01', '28000', '3D000', '42501']);

/** A URL the engine refused (a wrong database, user or password): said at start, never retried. */
export class HistoryEngineRefusedError extends Error {
  constructor(url: string, cause: unknown) {
    super(
      `history store ${url} refused the relay (${cause instanceof Error ? cause.message : String(cause)}): check the URL's database, user and password, or start with --history off`,
    );
    this.name = 'HistoryEngineRefusedError';
  }
}

/**
 * A store over the database at `url`. The tables are made when missing. An engine that cannot be
 * reached now does not stop the start (a relay may restart during the engine's outage): the first
 * call that reaches it makes the tables; one that refuses the URL is a HistoryEngineRefusedError.
 */
export async function openPostgresStore(url: string): Promise<PostgresHistoryStore> {
  const store = new PostgresHistoryStore(url);
  try {
    await store.ready();
  } catch (error) {
    if (REFUSED.has(sqlState(error) ?? '')) {
      await store.close();
      throw new HistoryEngineRefusedError(redactedUrl(url), error);
    }
  }
  return store;
}

export class PostgresHistoryStore implements HistoryStore {
  readonly description: string;
  readonly #pool: pg.Pool;
  #schema: Promise<void> | undefined;
  /** Hours whose partition this relay made or found; another relay's retention may drop one since. */
  readonly #knownHours = new Set<number>();
  #closed = false;

  constructor(url: string) {
    this.description = `postgres:${redactedUrl(url)}`;
    this.#pool = new pg.Pool({
      connectionString: url,
      max: POOL_SIZE,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      query_timeout: QUERY_TIMEOUT_MS,
      idleTimeoutMillis: 30_000,
      keepAlive: true,
      application_name: 'market-relay history',
    });
    // An idle connection the engine closed (a restart, an outage) is reported here; without a
    // listener it would take the process down. The next call opens a new one.
    this.#pool.on('error', () => undefined);
    // A connection lent out is listened to by pg-pool only once per `pool.query`: a connection the
    // engine cuts can report a second error (its query's, then its socket's) with no listener left,
    // which took the process down. Every connection keeps a listener of its own from the start;
    // what failed still reaches its caller as its query's rejection.
    this.#pool.on('connect', (client) => client.on('error', () => undefined));
  }

  /** Makes the tables once; a failure is tried again by the next call. */
  ready(): Promise<void> {
    this.#schema ??= (async () => {
      for (const statement of SCHEMA_STATEMENTS) await this.#pool.query(statement);
    })().catch((error: unknown) => {
      this.#schema = undefined;
      throw error;
    });
    return this.#schema;
  }

  async append(batch: readonly RecordedMessage[]): Promise<void> {
    this.#open();
    if (batch.length === 0) return;
    await this.ready();
    const { chunks, hours } = await copyChunks(batch);
    try {
      await this.#ensure(hours);
      try {
        await this.#insert(chunks);
      } catch (error) {
        if (sqlState(error) !== NO_PARTITION) throw error;
        // Retention dropped an hour we knew of: made again, the batch goes in once more.
        for (const hour of hours) this.#knownHours.delete(hour);
        await this.#ensure(hours);
        await this.#insert(chunks);
      }
    } catch (error) {
      // The engine may come back as another (restored, or new and empty): the next write checks
      // the tables and partitions again rather than trust what this one knew.
      this.#schema = undefined;
      this.#knownHours.clear();
      throw error;
    }
  }

  async *read(range: HistoryRange): AsyncIterable<RecordedMessage> {
    this.#open();
    await this.ready();
    let after: { rts: number; seq: number; epoch: string } | undefined;
    for (;;) {
      const values: unknown[] = [range.stream, range.from, range.to, PAGE_ROWS];
      const keyset =
        after === undefined ? '' : 'AND (rts_ms, seq, epoch) > ($5::bigint, $6::bigint, $7::text)';
      if (after !== undefined) values.push(after.rts, after.seq, after.epoch);
      const { rows } = await this.#pool.query<Row>(
        `SELECT ${COLUMNS} FROM ${MESSAGES_TABLE}
         WHERE stream = $1 AND rts_ms >= $2 AND rts_ms < $3 ${keyset}
         ORDER BY rts_ms, seq, epoch LIMIT $4`,
        values,
      );
      for (const row of rows) yield recordOf(row);
      const last = rows.at(-1);
      if (last === undefined || rows.length < PAGE_ROWS) return;
      after = { rts: last.rts_ms, seq: last.seq, epoch: last.epoch };
    }
  }

  writeParquet(range: HistoryRange, file: string): Promise<void> {
    return writeRecordsAsParquet(this.read(range), file);
  }

  async extent(stream: string): Promise<HistoryExtent | undefined> {
    this.#open();
    await this.ready();
    const { rows } = await this.#pool.query<{ oldest: number | null; newest: number | null; rows: number }>(
      `SELECT min(rts_ms)::float8 AS oldest, max(rts_ms)::float8 AS newest, count(*)::float8 AS rows
       FROM ${MESSAGES_TABLE} WHERE stream = $1`,
      [stream],
    );
    const [row] = rows;
    if (row === undefined || row.oldest === null || row.newest === null) return undefined;
    return { oldest: row.oldest, newest: row.newest, rows: row.rows };
  }

  async lastSnapshot(stream: string, at: number): Promise<number | undefined> {
    this.#open();
    await this.ready();
    // Newest first from `at`, hour by hour through an index: as far back as the last snapshot only.
    const { rows } = await this.#pool.query<{ at: number }>(
      `SELECT rts_ms::float8 AS at FROM ${MESSAGES_TABLE}
       WHERE stream = $1 AND rts_ms <= $2 AND type = 'snapshot' ORDER BY rts_ms DESC LIMIT 1`,
      [stream, at],
    );
    return rows[0]?.at;
  }

  /**
   * The cluster's retention, run by one relay at a time (an advisory lock; a relay that finds it
   * taken does nothing, returning 0): hours wholly past the age limit are dropped, then the rows of
   * the hour the cut falls in; while over the byte limit the oldest hours go, never the newest;
   * when the newest alone is over, its oldest tenth is deleted (its space reused, not given back).
   */
  async enforceRetention(policy: RetentionPolicy, now: number): Promise<number> {
    this.#open();
    await this.ready();
    return this.#withClient(async (client) => {
      const { rows: locked } = await client.query<{ locked: boolean }>(
        'SELECT pg_try_advisory_lock($1, $2) AS locked',
        [...RETENTION_LOCK],
      );
      if (locked[0]?.locked !== true) return 0;
      try {
        return await this.#trim(client, policy, now);
      } finally {
        await client.query('SELECT pg_advisory_unlock($1, $2)', [...RETENTION_LOCK]);
      }
    });
  }

  async stats(): Promise<HistoryStoreStats> {
    this.#open();
    await this.ready();
    const held = await partitions(this.#pool);
    const { rows: estimated } = await this.#pool.query<{ rows: number }>(
      `SELECT coalesce(sum(greatest(c.reltuples, 0)), 0)::float8 AS rows
       FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = '${MESSAGES_TABLE}'::regclass`,
    );
    const estimate = estimated[0]?.rows ?? 0;
    const counted =
      estimate < EXACT_COUNT_BELOW
        ? (await this.#pool.query<{ rows: number }>(`SELECT count(*)::float8 AS rows FROM ${MESSAGES_TABLE}`))
            .rows[0]?.rows
        : estimate;
    const { rows: oldest } = await this.#pool.query<{ oldest: number | null }>(
      `SELECT min(rts_ms)::float8 AS oldest FROM ${MESSAGES_TABLE}`,
    );
    return {
      rows: counted ?? 0,
      bytes: held.reduce((sum, partition) => sum + partition.bytes, 0),
      oldest: oldest[0]?.oldest ?? undefined,
    };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#pool.end();
  }

  async #trim(client: pg.PoolClient, policy: RetentionPolicy, now: number): Promise<number> {
    const cut = now - policy.maxAgeMs;
    let dropped = 0;
    let held = await partitions(client);
    for (const partition of held.slice(0, -1)) {
      if ((partition.hour + 1) * PARTITION_MS > cut) break;
      dropped += await this.#dropHour(client, partition.name, partition.hour);
    }
    dropped += (await client.query(`DELETE FROM ${MESSAGES_TABLE} WHERE rts_ms < $1`, [cut])).rowCount ?? 0;
    held = await partitions(client);
    let bytes = held.reduce((sum, partition) => sum + partition.bytes, 0);
    while (bytes > policy.maxBytes && held.length > 1) {
      const oldest = held.shift()!;
      dropped += await this.#dropHour(client, oldest.name, oldest.hour);
      bytes -= oldest.bytes;
    }
    if (bytes > policy.maxBytes) dropped += await this.#trimOldestRows(client);
    return dropped;
  }

  async #dropHour(client: pg.PoolClient, name: string, hour: number): Promise<number> {
    const { rows } = await client.query<{ rows: number }>(`SELECT count(*)::float8 AS rows FROM ${name}`);
    await dropPartition(client, name);
    this.#knownHours.delete(hour);
    return rows[0]?.rows ?? 0;
  }

  async #trimOldestRows(client: pg.PoolClient): Promise<number> {
    const { rows } = await client.query<{ rows: number }>(
      `SELECT count(*)::float8 AS rows FROM ${MESSAGES_TABLE}`,
    );
    const skip = Math.max(0, Math.ceil((rows[0]?.rows ?? 0) * SIZE_TRIM_FRACTION) - 1);
    const { rows: cut } = await client.query<{ until: number }>(
      `SELECT rts_ms::float8 AS until FROM ${MESSAGES_TABLE} ORDER BY rts_ms OFFSET $1 LIMIT 1`,
      [skip],
    );
    const until = cut[0]?.until;
    if (until === undefined) return 0;
    return (await client.query(`DELETE FROM ${MESSAGES_TABLE} WHERE rts_ms <= $1`, [until])).rowCount ?? 0;
  }

  async #ensure(hours: ReadonlySet<number>): Promise<void> {
    const missing = [...hours].filter((hour) => !this.#knownHours.has(hour));
    if (missing.length === 0) return;
    await ensurePartitions(this.#pool, missing);
    for (const hour of missing) this.#knownHours.add(hour);
  }

  /**
   * One transaction on one connection: the batch copied into the connection's staging table, then
   * inserted into the messages table past the fence (a message already recorded is skipped).
   */
  async #insert(chunks: readonly Buffer[]): Promise<void> {
    await this.#withClient(async (client) => {
      await client.query(`BEGIN; ${STAGING_STATEMENT}`);
      await pipeline(
        Readable.from(chunks),
        client.query(copyFrom(`COPY ${STAGING_TABLE} (${WRITTEN_COLUMNS}) FROM STDIN`)),
      );
      await client.query(
        `INSERT INTO ${MESSAGES_TABLE} (${WRITTEN_COLUMNS}) SELECT ${WRITTEN_COLUMNS} FROM ${STAGING_TABLE}
         ON CONFLICT DO NOTHING; COMMIT`,
      );
    });
  }

  /**
   * `work` on a connection of its own (a connection lost meanwhile reaches `work` as its query's
   * error: every connection has its own error listener, see the constructor). On any failure the
   * connection is closed rather than given back: its transaction, a COPY the engine may still be
   * reading, and a session lock go with it.
   */
  async #withClient<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.#pool.connect();
    try {
      const done = await work(client);
      client.release();
      return done;
    } catch (error) {
      client.release(error instanceof Error ? error : new Error(String(error)));
      throw error;
    }
  }

  #open(): void {
    if (this.#closed) throw new Error('history store is closed');
  }
}

/** The URL without its password, for logs and `/health`. */
export function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'postgres://(unparsable URL)';
  }
}

/**
 * The batch as COPY's text, a chunk of {@link COPY_SLICE_ROWS} rows made per turn of the event
 * loop, and the hours (partitions) its rows go into.
 */
async function copyChunks(
  batch: readonly RecordedMessage[],
): Promise<{ chunks: Buffer[]; hours: Set<number> }> {
  const chunks: Buffer[] = [];
  const hours = new Set<number>();
  for (let start = 0; start < batch.length; start += COPY_SLICE_ROWS) {
    if (start > 0) await nextTurn();
    let text = '';
    for (const record of batch.slice(start, start + COPY_SLICE_ROWS)) {
      const { line, rtsMs } = copyLine(record);
      text += line;
      hours.add(Math.floor(rtsMs / PARTITION_MS));
    }
    chunks.push(Buffer.from(text));
  }
  return { chunks, hours };
}
