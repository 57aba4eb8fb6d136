/**
 * What the shared PostgreSQL store keeps beyond the contract every store keeps: several relays'
 * stores over one database record a message once (the unique key's fence), the cluster's retention
 * is enforced by one of them at a time, hours past the retention are dropped whole, an engine that
 * goes away makes calls fail (quickly, without taking the process down) and is written to again
 * when it is back, and a URL the engine refuses is a clear error at start.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HistoryEngineRefusedError, openPostgresStore } from '../../src/history/postgres-store.ts';
import type { RecordedMessage } from '../../src/history/store.ts';
import { relayEntryPoint } from '../support/cluster/child-relay.ts';
import {
  freshDatabase,
  type PostgresServer,
  postgresAvailable,
  startPostgres,
} from '../support/postgres-server.ts';

const HOUR = 3_600_000;
const T0 = Date.parse('2026-12-01T10:00:00.000Z');
const STREAM = 'price:m1';

function message(seq: number, at: number, epoch = 'e1'): RecordedMessage {
  return {
    channel: 'price',
    stream: STREAM,
    market: 'm1',
    depth: undefined,
    epoch,
    seq,
    ts: new Date(at).toISOString(),
    rts: new Date(at).toISOString(),
    type: seq === 1 ? 'snapshot' : 'update',
    data: `{"price":"0.${seq}"}`,
    checksum: undefined,
  };
}

async function seqs(iterable: AsyncIterable<RecordedMessage>): Promise<string[]> {
  const read: string[] = [];
  for await (const item of iterable) read.push(`${item.epoch}/${item.seq}`);
  return read;
}

describe.skipIf(!postgresAvailable())('PostgreSQL history store', () => {
  let server: PostgresServer;
  let databases = 0;
  const database = () => {
    databases += 1;
    return freshDatabase(server, `store_${databases}`);
  };
  beforeAll(async () => {
    server = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    await server?.remove();
  });

  it('records a message once, whichever relay writes it and however often', async () => {
    const url = await database();
    const [a, b] = await Promise.all([openPostgresStore(url), openPostgresStore(url)]);
    const batch = Array.from({ length: 50 }, (_, i) => message(i + 1, T0 + i * 10));
    // Two relays writing the same messages at once (a hand-over's overlap), and a retried batch.
    await Promise.all([a.append(batch), b.append(batch.slice(10)), a.append(batch.slice(0, 20))]);
    const read = await seqs(b.read({ stream: STREAM, from: T0, to: T0 + HOUR }));
    expect(read).toEqual(batch.map((item) => `e1/${item.seq}`));
    // The same seq in another epoch is another message.
    await b.append([message(1, T0 + 1_000, 'e2')]);
    expect((await a.extent(STREAM))?.rows).toBe(51);
    await Promise.all([a.close(), b.close()]);
  });

  it('reads a range across hours, each hour a partition of its own', async () => {
    const store = await openPostgresStore(await database());
    await store.append([message(1, T0 - 1), message(2, T0 + 1), message(3, T0 + HOUR + 1)]);
    expect(await seqs(store.read({ stream: STREAM, from: T0 - HOUR, to: T0 + 2 * HOUR }))).toEqual([
      'e1/1',
      'e1/2',
      'e1/3',
    ]);
    expect(await seqs(store.read({ stream: STREAM, from: T0, to: T0 + HOUR }))).toEqual(['e1/2']);
    await store.close();
  });

  it('drops hours past the retention whole, and the rows of the hour the cut falls in', async () => {
    const store = await openPostgresStore(await database());
    await store.append([
      message(1, T0 - 3 * HOUR),
      message(2, T0 - 2 * HOUR),
      message(3, T0 - 30 * 60_000),
      message(4, T0 - 1),
      message(5, T0),
    ]);
    const before = (await store.stats()).bytes;
    expect(
      await store.enforceRetention({ maxAgeMs: 20 * 60_000, maxBytes: 1024 ** 3 }, T0 + 10 * 60_000),
    ).toBe(3);
    expect(await seqs(store.read({ stream: STREAM, from: 0, to: T0 + HOUR }))).toEqual(['e1/4', 'e1/5']);
    // Dropped hours give their space back to the engine.
    expect((await store.stats()).bytes).toBeLessThan(before);
    // A batch into an hour dropped meanwhile (this store knew of its partition) still goes in.
    await store.append([message(6, T0 - 3 * HOUR + 5)]);
    expect((await store.extent(STREAM))?.rows).toBe(3);
    await store.close();
  });

  it('enforces the retention from one relay at a time', async () => {
    const url = await database();
    const stores = await Promise.all([1, 2, 3].map(() => openPostgresStore(url)));
    await stores[0]!.append(Array.from({ length: 200 }, (_, i) => message(i + 1, T0 - 2 * HOUR + i)));
    const policy = { maxAgeMs: 60 * 60_000, maxBytes: 1024 ** 3 };
    const dropped = await Promise.all(stores.map((store) => store.enforceRetention(policy, T0)));
    // Whoever held the lock dropped the 200 rows; the others found it taken, or nothing left.
    expect(dropped.reduce((sum, rows) => sum + rows, 0)).toBe(200);
    await Promise.all(stores.map((store) => store.close()));
  });

  it('fails calls while the engine is away, and writes again once it is back', async () => {
    const url = await database();
    const store = await openPostgresStore(url);
    await store.append([message(1, T0)]);
    await server.stop();
    try {
      await expect(store.append([message(2, T0 + 1)])).rejects.toThrow();
      await expect(store.stats()).rejects.toThrow();
    } finally {
      await server.start();
    }
    await store.append([message(3, T0 + 2)]);
    expect(await seqs(store.read({ stream: STREAM, from: T0, to: T0 + HOUR }))).toEqual(['e1/1', 'e1/3']);
    await store.close();
  });

  it('writes a batch whole or not at all, and lives on, whenever the engine cuts its connection', async () => {
    const url = await database();
    const store = await openPostgresStore(url);
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    const [batches, size] = [30, 500];
    let cutting = true;
    // The store's connections closed by the engine every few milliseconds, whatever they are doing.
    const cutter = (async () => {
      let cuts = 0;
      while (cutting) {
        const { rowCount } = await admin.query(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
           WHERE application_name = 'market-relay history' AND pid <> pg_backend_pid()`,
        );
        cuts += rowCount ?? 0;
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      return cuts;
    })();
    let failed = 0;
    for (let batch = 0; batch < batches; batch += 1) {
      const first = batch * size + 1;
      const messages = Array.from({ length: size }, (_, i) => message(first + i, T0 + first + i));
      await store.append(messages).catch(() => {
        failed += 1;
      });
    }
    cutting = false;
    expect(await cutter).toBeGreaterThan(0);
    await admin.end();
    expect(failed).toBeGreaterThan(0);
    await store.append([message(batches * size + 1, T0 + HOUR - 1)]);
    const rows = (await store.extent(STREAM))!.rows - 1;
    // A batch the engine committed just before the cut may be counted failed, never half-written.
    expect(rows % size).toBe(0);
    expect(rows).toBeGreaterThanOrEqual((batches - failed) * size);
    await store.close();
  });

  it('takes a large batch without holding the event loop for it', async () => {
    const store = await openPostgresStore(await database());
    const book = (seq: number) =>
      JSON.stringify({
        bids: Array.from({ length: 10 }, (_, i) => [`0.${50 - i}000000`, `${seq + i}.25`]),
        asks: Array.from({ length: 10 }, (_, i) => [`0.${51 + i}000000`, `${seq * 3 + i}.5`]),
        last_price: '0.50000000',
      });
    const batch = Array.from({ length: 8_000 }, (_, i) => ({ ...message(i + 1, T0 + i), data: book(i) }));
    // Warmed up first: the compiler's threads count in the process's CPU too.
    await store.append(batch.slice(0, 2_000));
    // The most CPU the process spends between two turns of the loop: what one turn held it for,
    // whatever else the machine runs (the collector's and the compiler's threads count too). A
    // batch built in one piece took 190 ms and more here; made in slices, 5 to 17 ms, mostly the
    // collector moving the batch just made.
    let longestUs = 0;
    let probing = true;
    let last = process.cpuUsage();
    const probe = () => {
      const now = process.cpuUsage();
      longestUs = Math.max(longestUs, now.user + now.system - last.user - last.system);
      last = now;
      if (probing) setImmediate(probe);
    };
    setImmediate(probe);
    await store.append(batch);
    probing = false;
    expect((await store.extent(STREAM))?.rows).toBe(8_000);
    expect(longestUs / 1_000).toBeLessThan(50);
    await store.close();
  });

  it('makes its tables again when the engine comes back without them', async () => {
    const url = await database();
    const store = await openPostgresStore(url);
    await store.append([message(1, T0)]);
    // As an engine restored from before the relay's tables were made.
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query('DROP TABLE history_messages');
    await admin.end();
    await expect(store.append([message(2, T0 + 1)])).rejects.toThrow();
    await store.append([message(3, T0 + 2)]);
    expect(await seqs(store.read({ stream: STREAM, from: T0, to: T0 + HOUR }))).toEqual(['e1/3']);
    await store.close();
  });

  it('starts while the engine is away, and makes its tables when it is back', async () => {
    const url = await database();
    await server.stop();
    let store: Awaited<ReturnType<typeof openPostgresStore>> | undefined;
    try {
      store = await openPostgresStore(url);
      await expect(store.extent(STREAM)).rejects.toThrow();
    } finally {
      await server.start();
    }
    await store.append([message(1, T0)]);
    expect((await store.extent(STREAM))?.rows).toBe(1);
    await store.close();
  });

  it('says at start that the engine refused the URL, without its password', async () => {
    const url = server.url
      .replace('postgres@', 'postgres:secret@')
      .replace(/\/postgres$/, '/no_such_database');
    const opened = openPostgresStore(url);
    await expect(opened).rejects.toThrow(HistoryEngineRefusedError);
    await expect(opened).rejects.toThrow(/no_such_database/);
    await expect(opened).rejects.not.toThrow(/secret/);
  });

  it('stops a relay at start with one line when the engine refuses its URL', async () => {
    const url = server.url
      .replace('postgres@', 'postgres:secret@')
      .replace(/\/postgres$/, '/no_such_database');
    const run = promisify(execFile)(
      process.execPath,
      [relayEntryPoint(), 'serve', '--port=0', `--history=${url}`],
      {
        timeout: 20_000,
      },
    );
    const failed = await run.then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/no_such_database.*--history off/),
    ]);
    expect(failed?.stderr).not.toContain('secret');
  });
});
