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
import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { HISTORY_FILE, openDuckDbStore } from '../../src/history/duckdb-store.ts';
import type { RecordedMessage } from '../../src/history/store.ts';
import { sentText } from '../../src/relay/streams/recorded.ts';

const HOUR_MS = 3_600_000;

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

export interface StoreCopy {
  rows: number;
  /** How long the appends took (ms). */
  ms: number;
  /**
   * This process's CPU time from the first append to the store closed (µs): the appends, the
   * commits, the checkpoints DuckDB ran on the way and the last one at the close, all its threads.
   */
  cpuUs: number;
  /** The new store's files just before it closed (the log not yet folded in). */
  openBytes: number;
}

/**
 * Appends every record of the (closed) store `from` into a new store at `to` by the store's own
 * `append`, one batch per second of record time as the recorder writes them, `repeat` times (each
 * copy an hour later, its `seq` further on): what this checkout's store makes of those messages.
 */
export async function copyStore(from: string, to: string, repeat: number): Promise<StoreCopy> {
  rmSync(to, { recursive: true, force: true });
  const records = await everyRecord(from);
  const store = await openDuckDbStore(to);
  const started = performance.now();
  const cpuAtStart = process.cpuUsage();
  let copied: Omit<StoreCopy, 'cpuUs'>;
  try {
    for (let copy = 0; copy < repeat; copy += 1) {
      let batch: RecordedMessage[] = [];
      let second = Number.NaN;
      for (const record of records) {
        const at = Date.parse(record.rts) + copy * HOUR_MS;
        if (Math.floor(at / 1000) !== second && batch.length > 0) {
          await store.append(batch);
          batch = [];
        }
        second = Math.floor(at / 1000);
        batch.push(shifted(record, copy));
      }
      if (batch.length > 0) await store.append(batch);
    }
    copied = {
      rows: records.length * repeat,
      ms: performance.now() - started,
      openBytes: storeFileBytes(to),
    };
  } finally {
    await store.close();
  }
  const cpu = process.cpuUsage(cpuAtStart);
  return { ...copied, cpuUs: cpu.user + cpu.system };
}

/** Every record of the store at `dataDir`, in record time order. */
async function everyRecord(dataDir: string): Promise<RecordedMessage[]> {
  const streams = await streamKeys(dataDir);
  const store = await openDuckDbStore(dataDir);
  try {
    const records: RecordedMessage[] = [];
    for (const stream of streams)
      for await (const record of store.read({ stream, from: 0, to: Number.MAX_SAFE_INTEGER }))
        records.push(record);
    return records.sort((a, b) => Date.parse(a.rts) - Date.parse(b.rts));
  } finally {
    await store.close();
  }
}

/** The record an hour later per copy: its times moved, its `seq` past the copies before it. */
function shifted(record: RecordedMessage, copy: number): RecordedMessage {
  if (copy === 0) return record;
  const later = (time: string) => new Date(Date.parse(time) + copy * HOUR_MS).toISOString();
  return { ...record, seq: record.seq + copy * 10_000_000, ts: later(record.ts), rts: later(record.rts) };
}
