/**
 * @module bench/history/store-bytes
 * What a history store in a data folder costs on disk against the JSON of what it recorded: every
 * file of the store counted (the database file and its write-ahead log, as `ls` sees them, free
 * blocks included), over the bytes of the messages' texts as they were sent, each rebuilt from its
 * record by the relay's own builder (relay/streams/recorded.ts `sentText`). Read while the relay
 * runs, it is what the disk holds then (the newest records still in the log); after the relay has
 * closed the store (its checkpoint), what the record settles at. The columns' compression, from
 * DuckDB's `pragma_storage_info`, says where the bytes go.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { HISTORY_FILE, openDuckDbStore } from '../../src/history/duckdb-store.ts';
import { sentText } from '../../src/relay/streams/recorded.ts';

/** Every file of the store in `dataDir` (the database and its log), in bytes on disk. */
export function storeFileBytes(dataDir: string): number {
  if (!existsSync(dataDir)) return 0;
  return readdirSync(dataDir)
    .filter((name) => name.startsWith(HISTORY_FILE))
    .reduce((sum, name) => sum + statSync(path.join(dataDir, name)).size, 0);
}

export interface RecordedJson {
  rows: number;
  /** Bytes of the messages' texts as sent (UTF-8). */
  jsonBytes: number;
  /** The same by channel. */
  byChannel: Record<string, { rows: number; jsonBytes: number }>;
}

/** Reads every record of the (closed) store in `dataDir` back and sums the texts that were sent. */
export async function recordedJson(dataDir: string): Promise<RecordedJson> {
  const streams = await streamKeys(dataDir);
  const store = await openDuckDbStore(dataDir);
  const total: RecordedJson = { rows: 0, jsonBytes: 0, byChannel: {} };
  try {
    for (const stream of streams) {
      for await (const record of store.read({ stream, from: 0, to: Number.MAX_SAFE_INTEGER })) {
        const bytes = Buffer.byteLength(sentText(record));
        const channel = total.byChannel[record.channel] ?? { rows: 0, jsonBytes: 0 };
        total.byChannel[record.channel] = { rows: channel.rows + 1, jsonBytes: channel.jsonBytes + bytes };
        total.rows += 1;
        total.jsonBytes += bytes;
      }
    }
  } finally {
    await store.close();
  }
  return total;
}

export interface ColumnStorage {
  column: string;
  compression: string;
  segments: number;
}

/** How each column of the (closed) store is compressed: segments per column and method. */
export async function columnStorage(dataDir: string): Promise<ColumnStorage[]> {
  return (
    await query(
      dataDir,
      `SELECT column_name, compression, count(*)::DOUBLE FROM pragma_storage_info('messages')
       WHERE segment_type <> 'VALIDITY' GROUP BY ALL ORDER BY 1, 2`,
    )
  ).map(([column, compression, segments]) => ({
    column: String(column),
    compression: String(compression),
    segments: Number(segments),
  }));
}

/** Every stream the (closed) store in `dataDir` holds records of. */
export async function streamKeys(dataDir: string): Promise<string[]> {
  return (await query(dataDir, 'SELECT DISTINCT stream FROM messages ORDER BY 1')).map(([key]) =>
    String(key),
  );
}

async function query(dataDir: string, sql: string): Promise<unknown[][]> {
  const instance = await DuckDBInstance.create(path.join(dataDir, HISTORY_FILE), {
    access_mode: 'READ_ONLY',
    threads: '1',
  });
  try {
    const connection = await instance.connect();
    try {
      return (await connection.runAndReadAll(sql)).getRowsJS();
    } finally {
      connection.closeSync();
    }
  } finally {
    instance.closeSync();
  }
}
