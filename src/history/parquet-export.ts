/**
 * @module history/parquet-export
 * A range read out of a store that cannot write Parquet itself (the shared PostgreSQL store), written
 * as Parquet by DuckDB in memory: the rows go through DuckDB's Appender into a table of the export's
 * columns (docs/history.md "Export") and `COPY` writes the file, the same columns and types the
 * embedded store's export has. The rows are kept in DuckDB's memory only for the one export.
 */
import { DuckDBInstance } from '@duckdb/node-api';
import type { RecordedMessage } from './store.ts';

const EXPORT_TABLE = `CREATE TABLE export (
  channel VARCHAR, market VARCHAR, depth INTEGER, group_step VARCHAR, epoch VARCHAR, seq BIGINT,
  ts_ms BIGINT, rts_ms BIGINT, type VARCHAR, data VARCHAR, checksum UINTEGER
)`;

/** Writes `records` (in the order given) to `file` as Parquet. */
export async function writeRecordsAsParquet(
  records: AsyncIterable<RecordedMessage>,
  file: string,
): Promise<void> {
  // One thread and a small memory limit: the export shares the process with the relay.
  const instance = await DuckDBInstance.create(':memory:', { threads: '1', memory_limit: '256MB' });
  const connection = await instance.connect();
  try {
    await connection.run(EXPORT_TABLE);
    const appender = await connection.createAppender('export');
    try {
      for await (const record of records) {
        appender.appendVarchar(record.channel);
        appender.appendVarchar(record.market);
        if (record.depth === null || record.depth === undefined) appender.appendNull();
        else appender.appendInteger(record.depth);
        if (record.group === undefined) appender.appendNull();
        else appender.appendVarchar(record.group);
        appender.appendVarchar(record.epoch);
        appender.appendBigInt(BigInt(record.seq));
        appender.appendBigInt(BigInt(millisOf(record.ts)));
        appender.appendBigInt(BigInt(millisOf(record.rts)));
        appender.appendVarchar(record.type);
        appender.appendVarchar(record.data);
        if (record.checksum === undefined) appender.appendNull();
        else appender.appendUInteger(record.checksum);
        appender.endRow();
      }
    } finally {
      appender.closeSync();
    }
    // The file's rows in the order appended: DuckDB keeps insertion order unless told otherwise.
    await connection.run(
      `COPY (SELECT channel, market, depth, group_step AS "group", epoch, seq, make_timestamp(ts_ms * 1000) AS ts,
                    make_timestamp(rts_ms * 1000) AS rts, type, data, checksum FROM export)
       TO '${file.replaceAll("'", "''")}' (FORMAT parquet, COMPRESSION zstd)`,
    );
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/** A message time in epoch milliseconds; a text that is no time is 0, as the embedded store keeps it. */
function millisOf(text: string): number {
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? 0 : ms;
}
