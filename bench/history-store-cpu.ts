/**
 * @module bench/history-store-cpu
 * `node --import tsx bench/history-store-cpu.ts [--rows=20000] [--batch=2000] [--rounds=3] [--postgres=<url>]`:
 * what a history store's `append` costs the process that calls it, the store alone, in process.
 * The same realistic book messages (bench/history/book-records.ts: the updates a relay sends, then
 * as many snapshots, larger messages) go into the embedded store (DuckDB, in a temporary folder)
 * and the shared one (PostgreSQL: a private server started for the run, or the one at
 * `--postgres`), in batches of a flush window's size (about 2,000 rows every 4 s in
 * `npm run bench -- history`), one batch after the other. Per store: the process's CPU (user and
 * system, all threads: DuckDB's included) per row, which the machine's other load barely moves;
 * the event loop's delay while appending (a long synchronous piece of the append shows there, as
 * does the machine's load); the most CPU the process spent between two ticks of a 1 ms timer (the
 * longest turn, the load aside; DuckDB's threads add theirs); for a private PostgreSQL server also
 * its own CPU per row, another process's. Each round runs both stores, in turn order rotated, each
 * round's rows under an epoch of their own so that none is a duplicate; the figures are the
 * medians of the rounds, after one warm-up batch each.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { openDuckDbStore } from '../src/history/duckdb-store.ts';
import { openPostgresStore } from '../src/history/postgres-store.ts';
import type { HistoryStore, RecordedMessage } from '../src/history/store.ts';
import { type PostgresServer, startPostgres } from '../test/support/postgres-server.ts';
import { bookRecords } from './history/book-records.ts';
import { engineCpuUs } from './history/engine-cpu.ts';
import { median } from './lib/latency.ts';
import { fixed } from './lib/report.ts';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '20000' },
    batch: { type: 'string', default: '2000' },
    rounds: { type: 'string', default: '3' },
    postgres: { type: 'string' },
  },
});
const rows = Number(values.rows);
const batchRows = Number(values.batch);
const rounds = Number(values.rounds);
if (![rows, batchRows, rounds].every((n) => Number.isInteger(n) && n > 0))
  throw new Error('--rows, --batch and --rounds take positive integers');

interface Window {
  cpuUsPerRow: number;
  loopDelayMaxMs: number;
  loopDelayP99Ms: number;
  /** Per batch, the most CPU spent between two ticks of the probe's timer (ms). */
  stretchesMs: number[];
  engineCpuUsPerRow: number | undefined;
}

const folder = mkdtempSync(path.join(tmpdir(), 'market-relay-store-cpu-'));
let server: PostgresServer | undefined;
const stores: { name: string; store: HistoryStore; enginePort: number | undefined }[] = [];
try {
  if (values.postgres === undefined) server = await startPostgres();
  stores.push(
    { name: 'embedded (DuckDB)', store: await openDuckDbStore(folder), enginePort: undefined },
    {
      name: 'shared (PostgreSQL)',
      store: await openPostgresStore(values.postgres ?? server!.url),
      enginePort: server?.port,
    },
  );
  for (const form of ['updates', 'snapshots'] as const) {
    const records = bookRecords(rows, form);
    for (const { store } of stores)
      await store.append(inEpoch(records.slice(0, batchRows), `warm-up ${form}`));
    const windows = new Map<string, Window[]>(stores.map(({ name }) => [name, []]));
    for (let round = 0; round < rounds; round += 1) {
      for (let turn = 0; turn < stores.length; turn += 1) {
        const { name, store, enginePort } = stores[(round + turn) % stores.length]!;
        windows.get(name)!.push(await measure(store, inEpoch(records, `${form} ${round}`), enginePort));
      }
    }
    report(form, records, windows);
  }
} finally {
  for (const { store } of stores) await store.close();
  await server?.remove();
  rmSync(folder, { recursive: true, force: true });
}

async function measure(
  store: HistoryStore,
  batch: readonly RecordedMessage[],
  enginePort: number | undefined,
): Promise<Window> {
  const delay = monitorEventLoopDelay({ resolution: 1 });
  const engineBefore = enginePort === undefined ? undefined : engineCpuUs(enginePort);
  // The CPU spent between two ticks of a 1 ms timer: a long turn of the event loop shows here even
  // when the machine's load stretches every turn's wall time (which the delay above includes).
  let lastTick = process.cpuUsage();
  let longestStretchUs = 0;
  const probe = setInterval(() => {
    const now = process.cpuUsage();
    longestStretchUs = Math.max(longestStretchUs, now.user + now.system - lastTick.user - lastTick.system);
    lastTick = now;
  }, 1);
  const stretchesMs: number[] = [];
  delay.enable();
  const before = process.cpuUsage();
  for (let at = 0; at < batch.length; at += batchRows) {
    longestStretchUs = 0;
    await store.append(batch.slice(at, at + batchRows));
    stretchesMs.push(longestStretchUs / 1e3);
  }
  const used = process.cpuUsage(before);
  delay.disable();
  clearInterval(probe);
  const engineAfter = enginePort === undefined ? undefined : engineCpuUs(enginePort);
  return {
    cpuUsPerRow: (used.user + used.system) / batch.length,
    loopDelayMaxMs: delay.max / 1e6,
    loopDelayP99Ms: delay.percentile(99) / 1e6,
    stretchesMs,
    engineCpuUsPerRow:
      engineBefore === undefined || engineAfter === undefined
        ? undefined
        : (engineAfter - engineBefore) / batch.length,
  };
}

function inEpoch(batch: readonly RecordedMessage[], epoch: string): RecordedMessage[] {
  return batch.map((record) => ({ ...record, epoch }));
}

function report(form: string, records: readonly RecordedMessage[], windows: Map<string, Window[]>): void {
  const jsonBytes = records.reduce((sum, record) => sum + Buffer.byteLength(record.data), 0);
  console.log(
    `${rows} book ${form} (${fixed(jsonBytes / rows, 0)} bytes of data each on average) in batches of ${batchRows}, ${rounds} rounds, medians:`,
  );
  const perRow = new Map<string, number>();
  for (const [name, measured] of windows) {
    const cpu = median(measured.map((w) => w.cpuUsPerRow));
    perRow.set(name, cpu);
    const engine = measured.map((w) => w.engineCpuUsPerRow).filter((us) => us !== undefined);
    const stretches = measured.flatMap((w) => w.stretchesMs);
    console.log(
      `  ${name}: ${fixed(cpu, 2)} µs of CPU a row (rounds: ${measured.map((w) => fixed(w.cpuUsPerRow, 2)).join(', ')}), ` +
        `event-loop delay while appending p99 ${fixed(median(measured.map((w) => w.loopDelayP99Ms)), 2)} ms, ` +
        `max ${fixed(median(measured.map((w) => w.loopDelayMaxMs)), 2)} ms, ` +
        `CPU between two 1 ms timer ticks at most ${fixed(median(stretches), 2)} ms in a batch's append (median of the batches; ` +
        `${fixed(Math.max(...stretches), 2)} ms in the worst)` +
        (engine.length > 0 ? `; the engine's own CPU ${fixed(median(engine), 2)} µs a row` : ''),
    );
  }
  const [embedded, shared] = [...perRow.values()];
  console.log(`  shared over embedded, CPU a row: ${fixed(shared! / embedded!, 2)}x`);
}
