/**
 * The embedded store's file format: a new store keeps `data` as text in a zstd-compressed column
 * (large texts too) and takes under the 0.2x of its messages' JSON that docs/operations.md
 * sizes the disk by; a store made before that keeps working as made: its large texts are still
 * written deflated, and every record reads back exactly.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { storeFileBytes } from '../../bench/history/store-bytes.ts';
import { HISTORY_FILE, openDuckDbStore } from '../../src/history/duckdb-store.ts';
import type { RecordedMessage } from '../../src/history/store.ts';
import { sentText } from '../../src/relay/streams/recorded.ts';

const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

function tempFolder(): string {
  const folder = mkdtempSync(path.join(tmpdir(), 'history-format-'));
  folders.push(folder);
  return folder;
}

const T0 = Date.parse('2026-12-01T10:00:00.000Z');
const MARKETS = Array.from(
  { length: 50 },
  (_, i) => `6f1c2a3e-0000-4000-8000-${String(i).padStart(12, '0')}`,
);
/** A catalogue-sized text: what the old format deflates and the new one keeps as text. */
const LARGE = JSON.stringify(
  Array.from({ length: 40 }, (_, i) => ({ id: MARKETS[i % 50], question: `Will it happen ${i}?` })),
);

/** A busy book's update as the relay sends it: one to three changed levels of exact decimals. */
const levels = fc.array(
  fc.tuple(
    fc.integer({ min: 1, max: 99 }),
    fc.integer({ min: 0, max: 99_999 }),
    fc.integer({ min: 0, max: 999 }),
  ),
  { minLength: 1, maxLength: 3 },
);
const side = (drawn: [number, number, number][]) =>
  drawn.map(([price, size, fraction]) => [
    `0.${String(price).padStart(2, '0')}000000`,
    `${size}.${fraction}`,
  ]);

function bookUpdates(count: number): RecordedMessage[] {
  const draws = fc.sample(fc.tuple(levels, levels), { numRuns: count, seed: 47 });
  return draws.map(([bids, asks], i) => {
    const market = MARKETS[i % MARKETS.length] ?? '';
    const at = T0 + Math.floor(i / MARKETS.length) * 250;
    return {
      channel: 'book',
      stream: `book:${market}:10`,
      market,
      depth: 10,
      epoch: 'k3x9q',
      seq: Math.floor(i / MARKETS.length) + 2,
      ts: new Date(at - 40).toISOString(),
      rts: new Date(at).toISOString(),
      type: 'update',
      data: JSON.stringify({ bids: side(bids), asks: side(asks) }),
      checksum: (i * 2_654_435_761) % 4_294_967_296,
    };
  });
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

async function query(folder: string, sql: string): Promise<unknown[][]> {
  const instance = await DuckDBInstance.create(path.join(folder, HISTORY_FILE));
  try {
    const connection = await instance.connect();
    const rows = (await connection.runAndReadAll(sql)).getRowsJS();
    connection.closeSync();
    return rows;
  } finally {
    instance.closeSync();
  }
}

/** The table as the first stores made it, in the engine's default storage format. */
async function createFormerTable(folder: string): Promise<void> {
  await query(
    folder,
    `CREATE TABLE messages (channel VARCHAR NOT NULL, stream VARCHAR NOT NULL, market VARCHAR NOT NULL,
      depth INTEGER, epoch VARCHAR NOT NULL, seq BIGINT NOT NULL, ts_ms BIGINT NOT NULL,
      rts_ms BIGINT NOT NULL, ts_text VARCHAR, rts_text VARCHAR, type VARCHAR NOT NULL, data VARCHAR,
      data_deflated BLOB, checksum UINTEGER)`,
  );
}

/** Every 50th message a catalogue's update beside the books (the simulator's mix has both). */
function withCatalogues(updates: RecordedMessage[]): RecordedMessage[] {
  return updates.map((update, i) =>
    i % 50 === 0
      ? {
          ...update,
          channel: 'markets',
          stream: 'markets:active',
          market: 'active',
          depth: undefined,
          seq: i / 50 + 1,
          data: LARGE.replace('happen', `happen by ${i}`),
          checksum: undefined,
        }
      : update,
  );
}

describe('the embedded store file', () => {
  it('keeps a mix of book updates and catalogue texts in under 0.2x its JSON, less than the format before', async () => {
    const messages = withCatalogues(bookUpdates(20_000));
    const json = messages.reduce((sum, message) => sum + Buffer.byteLength(sentText(message)), 0);
    const before = tempFolder();
    await createFormerTable(before);
    const now = tempFolder();
    for (const folder of [before, now]) {
      const store = await openDuckDbStore(folder);
      // A batch per 250 ms poll round of the 50 books, as the recorder's flushes bring them.
      for (let i = 0; i < messages.length; i += MARKETS.length * 4)
        await store.append(messages.slice(i, i + MARKETS.length * 4));
      await store.close();
    }
    expect(storeFileBytes(now)).toBeLessThan(storeFileBytes(before) * 0.9);
    expect(storeFileBytes(now) / json).toBeLessThan(0.2);
    const stream = messages[7]?.stream ?? '';
    expect(await readAll(now, stream)).toEqual(messages.filter((message) => message.stream === stream));
  });

  it('keeps a large `data` as text in its zstd column', async () => {
    const folder = tempFolder();
    const [first] = bookUpdates(1);
    if (first === undefined) throw new Error('no sample');
    const large = { ...first, type: 'snapshot' as const, data: LARGE };
    const store = await openDuckDbStore(folder);
    await store.append([large]);
    await store.close();
    expect(await query(folder, 'SELECT count(data), count(data_deflated) FROM messages')).toEqual([[1n, 0n]]);
    expect(
      await query(
        folder,
        "SELECT DISTINCT compression FROM pragma_storage_info('messages') WHERE column_name = 'data' AND segment_type = 'VARCHAR'",
      ),
    ).toEqual([['ZSTD']]);
    expect(await readAll(folder, large.stream)).toEqual([large]);
  });

  it('a store made before keeps its format: large texts deflated, every record read back exactly', async () => {
    const folder = tempFolder();
    await createFormerTable(folder);
    const [first, second] = bookUpdates(2);
    if (first === undefined || second === undefined) throw new Error('no sample');
    const large = { ...first, type: 'snapshot' as const, data: LARGE };
    const small = { ...second, stream: first.stream, market: first.market, seq: first.seq + 1 };
    const store = await openDuckDbStore(folder);
    await store.append([large, small]);
    await store.close();
    expect(await query(folder, 'SELECT count(data), count(data_deflated) FROM messages')).toEqual([[1n, 1n]]);
    expect(await readAll(folder, large.stream)).toEqual([large, small]);
  });
});
