/**
 * @module history/postgres-schema
 * The shared history store's tables in PostgreSQL (docs/history.md "The shared store"): one table
 * of messages partitioned by the hour of `rts`, each hour a partition created on first need by
 * whichever relay writes into it first. Partitions because retention then drops whole hours
 * (the engine gives their space back at once, where a DELETE leaves it to be reused), and a
 * time-range read of one stream touches only the hours it covers, each through the unique index
 * that begins with (stream, rts_ms). The unique key (stream, rts_ms, seq, epoch) is the fence that
 * keeps a message from being recorded twice: a partitioned table's unique key must hold its
 * partition key, and a message has one `rts`, so (stream, epoch, seq) alone would fence no more.
 */
import type { Pool, PoolClient } from 'pg';

export const MESSAGES_TABLE = 'history_messages';

/** Width of one partition: an hour of `rts`. */
export const PARTITION_MS = 3_600_000;

/** The columns of a message, in the table and in the staging table a write is copied into first. */
const COLUMN_DEFINITIONS = `
    channel text NOT NULL,
    stream text NOT NULL,
    market text NOT NULL,
    depth integer,
    group_step text,
    epoch text NOT NULL,
    seq bigint NOT NULL,
    ts_ms bigint NOT NULL,
    rts_ms bigint NOT NULL,
    ts_text text,
    rts_text text,
    type text NOT NULL,
    data text NOT NULL,
    checksum bigint`;

export const SCHEMA_STATEMENTS = [
  `CREATE TABLE IF NOT EXISTS ${MESSAGES_TABLE} (${COLUMN_DEFINITIONS},
    UNIQUE (stream, rts_ms, seq, epoch)
  ) PARTITION BY RANGE (rts_ms)`,
  // The oldest record, the retention's cut and the size trim read by time across streams.
  `CREATE INDEX IF NOT EXISTS ${MESSAGES_TABLE}_rts ON ${MESSAGES_TABLE} (rts_ms)`,
];

/**
 * A write's batch is copied (COPY cannot skip a row already recorded) into this table of the
 * writing connection's own, then inserted from it with the fence in one statement. Temporary, so
 * never shared between relays or seen by a read; emptied at each commit; its columns said here
 * rather than taken from the messages table, so that making it takes no lock on that table.
 */
export const STAGING_TABLE = 'history_staging';
export const STAGING_STATEMENT = `CREATE TEMP TABLE IF NOT EXISTS ${STAGING_TABLE} (${COLUMN_DEFINITIONS}) ON COMMIT DELETE ROWS`;

/** The name of the partition holding hour `hour` (epoch milliseconds / PARTITION_MS). */
function partitionName(hour: number): string {
  return `${MESSAGES_TABLE}_h${hour}`;
}

/** SQLSTATEs of a partition that another relay created (or dropped) at the same moment. */
const RACED = new Set(['42P07', '23505', '42P01']);

/** Creates the partitions of `hours` that are missing; another relay creating one too is fine. */
export async function ensurePartitions(client: Pool | PoolClient, hours: Iterable<number>): Promise<void> {
  for (const hour of hours) {
    const from = hour * PARTITION_MS;
    try {
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${partitionName(hour)} PARTITION OF ${MESSAGES_TABLE}
         FOR VALUES FROM (${from}) TO (${from + PARTITION_MS})`,
      );
    } catch (error) {
      if (!RACED.has(sqlState(error) ?? '')) throw error;
    }
  }
}

export interface Partition {
  name: string;
  hour: number;
  bytes: number;
}

/** The table's partitions, oldest first, with the bytes each holds (table, indexes, TOAST). */
export async function partitions(client: Pool | PoolClient): Promise<Partition[]> {
  const result = await client.query<{ name: string; bytes: string }>(
    `SELECT c.relname AS name, pg_total_relation_size(c.oid)::text AS bytes
     FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
     WHERE i.inhparent = '${MESSAGES_TABLE}'::regclass`,
  );
  return result.rows
    .map(({ name, bytes }) => ({
      name,
      hour: Number(name.slice(`${MESSAGES_TABLE}_h`.length)),
      bytes: Number(bytes),
    }))
    .filter(({ hour }) => Number.isInteger(hour))
    .sort((a, b) => a.hour - b.hour);
}

export async function dropPartition(client: PoolClient, name: string): Promise<void> {
  await client.query(`DROP TABLE IF EXISTS ${name}`);
}

/** The SQLSTATE of a PostgreSQL error, if it is one. */
export function sqlState(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  return typeof error.code === 'string' ? error.code : undefined;
}
