/**
 * The contract every HistoryStore keeps (src/history/store.ts), run against each implementation:
 * the embedded DuckDB store, on disk in a temporary folder, and the shared PostgreSQL store, on a
 * private server with a database of its own per test (skipped, saying what to install, where
 * PostgreSQL is not). Recording, the export, `since` and replay rely on exactly this.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDuckDbStore } from '../../src/history/duckdb-store.ts';
import { openPostgresStore } from '../../src/history/postgres-store.ts';
import type { HistoryStore, RecordedMessage } from '../../src/history/store.ts';
import {
  freshDatabase,
  type PostgresServer,
  postgresAvailable,
  startPostgres,
} from '../support/postgres-server.ts';

const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

function tempFolder(): string {
  const folder = mkdtempSync(path.join(tmpdir(), 'history-store-'));
  folders.push(folder);
  return folder;
}

const withPostgres = postgresAvailable();
let postgres: PostgresServer | undefined;
beforeAll(async () => {
  if (withPostgres) postgres = await startPostgres();
}, 60_000);
afterAll(async () => {
  await postgres?.remove();
});

/** The database of a place: made at its first open, the same one at every open after. */
const databases = new Map<string, Promise<string>>();
function databaseOf(place: string): Promise<string> {
  let url = databases.get(place);
  if (url === undefined) {
    if (postgres === undefined) throw new Error('PostgreSQL not started');
    url = freshDatabase(postgres, `contract_${databases.size + 1}`);
    databases.set(place, url);
  }
  return url;
}

/** Each implementation: opens a store over `place` (the same place again = the same record). */
const implementations: [string, (place: string) => Promise<HistoryStore>][] = [
  ['embedded DuckDB', (place) => openDuckDbStore(place)],
  ...(withPostgres
    ? [
        [
          'shared PostgreSQL',
          async (place: string): Promise<HistoryStore> => openPostgresStore(await databaseOf(place)),
        ] as [string, (place: string) => Promise<HistoryStore>],
      ]
    : []),
];

const T0 = Date.parse('2026-12-01T10:00:00.000Z');
const MARKET = '6f1c2a3e-0000-4000-8000-000000000001';

function message(seq: number, at: number, overrides: Partial<RecordedMessage> = {}): RecordedMessage {
  return {
    channel: 'book',
    stream: `book:${MARKET}:full`,
    market: MARKET,
    depth: null,
    epoch: 'e1',
    seq,
    ts: new Date(at - 5).toISOString(),
    rts: new Date(at).toISOString(),
    type: seq === 1 ? 'snapshot' : 'update',
    data: JSON.stringify({ bids: [[`0.${String(seq).padStart(8, '0')}`, `${seq}.5`]], asks: [] }),
    checksum: seq * 1000,
    ...overrides,
  };
}

async function all(iterable: AsyncIterable<RecordedMessage>): Promise<RecordedMessage[]> {
  const read: RecordedMessage[] = [];
  for await (const item of iterable) read.push(item);
  return read;
}

describe.each(implementations)('HistoryStore contract: %s', (_name, open) => {
  it('gives back a stream range in order, every field as appended', async () => {
    const store = await open(tempFolder());
    const batch = [3, 1, 2].map((seq) => message(seq, T0 + seq * 100));
    const other = message(1, T0 + 150, {
      stream: 'price:x',
      channel: 'price',
      market: 'x',
      depth: undefined,
    });
    await store.append([
      ...batch,
      other,
      { ...message(4, T0 + 400), checksum: undefined, ts: '2026-12-01T09:59:59.123456Z' },
    ]);
    const read = await all(store.read({ stream: `book:${MARKET}:full`, from: T0, to: T0 + 1_000 }));
    expect(read.map((item) => item.seq)).toEqual([1, 2, 3, 4]);
    expect(read[0]).toEqual(message(1, T0 + 100));
    // A time of another precision comes back as it was given; a missing checksum stays missing.
    expect(read[3]).toMatchObject({ ts: '2026-12-01T09:59:59.123456Z', checksum: undefined });
    expect(await all(store.read({ stream: 'price:x', from: T0, to: T0 + 1_000 }))).toEqual([other]);
    // A grouped book stream keeps its group step.
    const grouped = message(1, T0 + 120, { stream: `book:${MARKET}:full:0.05`, group: '0.05' });
    await store.append([grouped]);
    const readGrouped = await all(
      store.read({ stream: `book:${MARKET}:full:0.05`, from: T0, to: T0 + 1_000 }),
    );
    expect(readGrouped).toEqual([grouped]);
    expect(readGrouped[0]?.group).toBe('0.05');
    await store.close();
  });

  it('gives back a large `data` (a catalogue snapshot) as it was given, also in Parquet', async () => {
    const place = tempFolder();
    const store = await open(place);
    const catalogue = JSON.stringify(
      Object.fromEntries(
        Array.from({ length: 200 }, (_, i) => [`m${i}`, { status: 'ACTIVE', volume: `${i}.5` }]),
      ),
    );
    const large = message(1, T0, { data: catalogue });
    await store.append([large, message(2, T0 + 1)]);
    expect(await all(store.read({ stream: `book:${MARKET}:full`, from: T0, to: T0 + 2 }))).toEqual([
      large,
      message(2, T0 + 1),
    ]);
    const file = path.join(place, 'large.parquet');
    await store.writeParquet({ stream: `book:${MARKET}:full`, from: T0, to: T0 + 2 }, file);
    const reader = await (await DuckDBInstance.create(':memory:')).connect();
    const rows = (
      await reader.runAndReadAll(`SELECT seq::INT, data, epoch_ms(ts)::DOUBLE FROM '${file}' ORDER BY seq`)
    ).getRowsJS();
    expect(rows.map(([seq, data]) => [seq, data])).toEqual([
      [1, catalogue],
      [2, message(2, T0 + 1).data],
    ]);
    expect(rows[0]?.[2]).toBe(T0 - 5);
    reader.closeSync();
    await store.close();
  });

  it('gives back texts holding backslashes, tabs, line ends and any character as they were given', async () => {
    const store = await open(tempFolder());
    // A text store's escapes and separators, its NULL spelling, quotes, and characters past ASCII.
    const odd = ['\\', '\\N', '\t', '\n', '\r\n', '\\.', '"', "'", 'é€😀\u2028', '\\\\t'];
    const stream = 'rest:/odd\tpath\\x';
    const batch = odd.map((text, i) =>
      message(i + 1, T0 + i, {
        channel: 'rest',
        stream,
        market: `/odd\tpath\\x${text}`,
        epoch: `e\\${text}`,
        ts: `ts ${text}`,
        data: JSON.stringify({ text }).concat(text),
        group: text,
      }),
    );
    await store.append(batch);
    expect(await all(store.read({ stream, from: T0, to: T0 + odd.length }))).toEqual(
      batch.map((record) => ({ ...record, depth: undefined })),
    );
    await store.close();
  });

  it('takes `from` as inclusive and `to` as exclusive', async () => {
    const store = await open(tempFolder());
    await store.append([1, 2, 3, 4].map((seq) => message(seq, T0 + seq * 1_000)));
    const read = await all(store.read({ stream: `book:${MARKET}:full`, from: T0 + 2_000, to: T0 + 4_000 }));
    expect(read.map((item) => item.seq)).toEqual([2, 3]);
    await store.close();
  });

  it('streams a range larger than one page, and stops early when the reader does', async () => {
    const store = await open(tempFolder());
    const count = 5_000;
    await store.append(Array.from({ length: count }, (_, i) => message(i + 1, T0 + i)));
    let seen = 0;
    let last = 0;
    for await (const item of store.read({ stream: `book:${MARKET}:full`, from: T0, to: T0 + count })) {
      expect(item.seq).toBe(last + 1);
      last = item.seq;
      seen += 1;
    }
    expect(seen).toBe(count);
    for await (const item of store.read({ stream: `book:${MARKET}:full`, from: T0, to: T0 + count }))
      if (item.seq === 10) break;
    // The store still answers after a read left early.
    expect(await store.extent(`book:${MARKET}:full`)).toEqual({
      oldest: T0,
      newest: T0 + count - 1,
      rows: count,
    });
    await store.close();
  });

  it('tells how far a stream reaches, and nothing for a stream never recorded', async () => {
    const store = await open(tempFolder());
    expect(await store.extent(`book:${MARKET}:full`)).toBeUndefined();
    expect(await store.stats()).toMatchObject({ rows: 0, oldest: undefined });
    await store.append([message(1, T0), message(2, T0 + 500)]);
    expect(await store.extent(`book:${MARKET}:full`)).toEqual({ oldest: T0, newest: T0 + 500, rows: 2 });
    expect(await store.stats()).toMatchObject({ rows: 2, oldest: T0 });
    expect((await store.stats()).bytes).toBeGreaterThan(0);
    // A later write of an older message (another stream's, sent late) moves the oldest back.
    await store.append([
      message(3, T0 + 600),
      message(1, T0 - 100, { stream: 'price:x', channel: 'price', market: 'x', depth: undefined }),
    ]);
    expect(await store.stats()).toMatchObject({ rows: 4, oldest: T0 - 100 });
    await store.close();
  });

  it('tells when a stream’s last snapshot at or before a time was recorded', async () => {
    const store = await open(tempFolder());
    const stream = `book:${MARKET}:full`;
    expect(await store.lastSnapshot(stream, T0 + 10_000)).toBeUndefined();
    await store.append([
      message(1, T0),
      message(2, T0 + 100),
      message(3, T0 + 200, { type: 'snapshot', epoch: 'e2' }),
      message(4, T0 + 300),
      message(1, T0 + 400, { stream: 'price:x', channel: 'price', market: 'x', depth: undefined }),
    ]);
    expect(await store.lastSnapshot(stream, T0 + 10_000)).toBe(T0 + 200);
    expect(await store.lastSnapshot(stream, T0 + 200)).toBe(T0 + 200);
    expect(await store.lastSnapshot(stream, T0 + 199)).toBe(T0);
    expect(await store.lastSnapshot(stream, T0 - 1)).toBeUndefined();
    expect(await store.lastSnapshot('price:x', T0 + 10_000)).toBe(T0 + 400);
    await store.close();
  });

  it('keeps what it was given across a close and an open', async () => {
    const place = tempFolder();
    const first = await open(place);
    await first.append([message(1, T0), message(2, T0 + 1)]);
    await first.close();
    const again = await open(place);
    expect((await all(again.read({ stream: `book:${MARKET}:full`, from: T0, to: T0 + 2 }))).length).toBe(2);
    expect(await again.stats()).toMatchObject({ rows: 2, oldest: T0 });
    await again.close();
  });

  it('drops what is older than the retention, and the oldest while over its bytes', async () => {
    const store = await open(tempFolder());
    const now = T0 + 3_600_000;
    await store.append([message(1, T0), message(2, now - 10_000), message(3, now - 5_000)]);
    expect(await store.stats()).toMatchObject({ rows: 3, oldest: T0 });
    expect(await store.enforceRetention({ maxAgeMs: 60_000, maxBytes: 1024 ** 3 }, now)).toBe(1);
    expect((await store.extent(`book:${MARKET}:full`))?.oldest).toBe(now - 10_000);
    expect(await store.stats()).toMatchObject({ rows: 2, oldest: now - 10_000 });
    // Over a byte limit no store can keep: the oldest go first, and the store keeps working.
    const big = Array.from({ length: 20_000 }, (_, i) => message(10 + i, now - 4_000 + i / 10));
    await store.append(big);
    const before = (await store.stats()).rows;
    await store.enforceRetention({ maxAgeMs: 60_000, maxBytes: 1 }, now);
    const after = await store.stats();
    expect(after.rows).toBeLessThan(before);
    await store.append([message(99_999, now)]);
    expect((await store.extent(`book:${MARKET}:full`))?.newest).toBe(now);
    await store.close();
  });

  it('writes a range as a Parquet file', async () => {
    const place = tempFolder();
    const store = await open(place);
    await store.append([message(1, T0), message(2, T0 + 1)]);
    const file = path.join(place, 'range.parquet');
    await store.writeParquet({ stream: `book:${MARKET}:full`, from: T0, to: T0 + 2 }, file);
    expect(readFileSync(file).subarray(0, 4).toString()).toBe('PAR1');
    await store.close();
  });

  it('refuses work once closed', async () => {
    const store = await open(tempFolder());
    await store.close();
    await expect(store.append([message(1, T0)])).rejects.toThrow(/closed/);
  });
});
