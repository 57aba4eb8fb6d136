/**
 * The `history` benchmark's premises (bench/history/): the seeded record is a book a client could
 * follow (a snapshot, then updates one `seq` apart every poll interval, each checksum the book's
 * after it), and the store's measure counts every message's JSON as it was sent and every file of
 * the store.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { seedBook } from '../../bench/history/seed.ts';
import { copyStore, recordedJson, storeFileBytes } from '../../bench/history/store-bytes.ts';
import { benchHistoryConfig } from '../../bench/lib/history-config.ts';
import { applyBookUpdate, type BookState, bookChecksum } from '../../packages/protocol/src/protocol/book.ts';
import type { BookData } from '../../packages/protocol/src/protocol/messages.ts';
import { openDuckDbStore } from '../../src/history/duckdb-store.ts';
import type { RecordedMessage } from '../../src/history/store.ts';
import { limitDepth } from '../../src/relay/channels/book/codec.ts';
import { sentText } from '../../src/relay/streams/recorded.ts';

const MARKET = '6f1c2a3e-0000-4000-8000-000000000047';
const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

function tempFolder(): string {
  const folder = mkdtempSync(path.join(tmpdir(), 'bench-history-'));
  folders.push(folder);
  return folder;
}

async function readAll(folder: string, stream: string): Promise<RecordedMessage[]> {
  const store = await openDuckDbStore(folder);
  try {
    const read: RecordedMessage[] = [];
    for await (const record of store.read({ stream, from: 0, to: Number.MAX_SAFE_INTEGER }))
      read.push(record);
    return read;
  } finally {
    await store.close();
  }
}

describe('the history benchmark', () => {
  it('seeds a book a client can follow: seq one apart, every checksum the book after the message', async () => {
    const folder = tempFolder();
    const seeded = await seedBook(folder, MARKET, {
      durationMs: 600_000,
      intervalMs: 250,
      endsAgoMs: 60_000,
    });
    expect(seeded.messages).toBe(2_400);
    const records = await readAll(folder, seeded.stream);
    expect(records).toHaveLength(2_400);
    let book: BookState = { bids: [], asks: [] };
    for (const [i, record] of records.entries()) {
      expect(record.seq).toBe(i + 1);
      expect(record.type).toBe(i === 0 ? 'snapshot' : 'update');
      expect(Date.parse(record.rts)).toBe(seeded.from + i * 250);
      const data = JSON.parse(record.data) as BookData;
      book = i === 0 ? data : applyBookUpdate(book, data);
      expect(record.checksum).toBe(bookChecksum(limitDepth(book, 10)));
    }
    expect(seeded.to).toBeLessThanOrEqual(Date.now() - 60_000);
  });

  it('counts the JSON as sent and every file of the store, also of a copy appended again', async () => {
    const minute = tempFolder();
    await seedBook(minute, MARKET, { durationMs: 60_000, intervalMs: 250, endsAgoMs: 60_000 });
    const records = await readAll(minute, `book:${MARKET}:10`);
    const json = records.reduce((sum, record) => sum + Buffer.byteLength(sentText(record)), 0);
    const measured = await recordedJson(minute);
    expect(measured).toMatchObject({ rows: 240, jsonBytes: json, byChannel: { book: { rows: 240 } } });
    expect(storeFileBytes(minute)).toBeGreaterThan(0);
    const copy = tempFolder();
    const copied = await copyStore(minute, copy, 2);
    expect(copied.rows).toBe(480);
    expect(copied.openBytes).toBeGreaterThan(0);
    // The second copy's `seq` runs 10,000,000 further on: its digits are the only bytes that differ.
    const longerSeqs = records.reduce((sum, record) => sum + 8 - String(record.seq).length, 0);
    expect(await recordedJson(copy)).toMatchObject({ rows: 480, jsonBytes: 2 * json + longerSeqs });
  });

  it('records into the embedded store or a PostgreSQL URL, and refuses any other store', () => {
    expect(benchHistoryConfig(undefined, undefined)).toBeUndefined();
    expect(benchHistoryConfig('embedded', '/data')).toMatchObject({ store: 'embedded', dataDir: '/data' });
    expect(benchHistoryConfig('postgres://bench@127.0.0.1:5433/history', '/data')).toMatchObject({
      store: 'postgres',
      url: 'postgres://bench@127.0.0.1:5433/history',
    });
    expect(() => benchHistoryConfig('redis://127.0.0.1', '/data')).toThrow(/embedded or a postgres/);
  });
});
