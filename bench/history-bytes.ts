/**
 * @module bench/history-bytes
 * `node --import tsx bench/history-bytes.ts <data-dir> [--copy-to <dir>] [--repeat N]`: the bytes a
 * history store takes on disk over the JSON of the messages it recorded (bench/history/store-bytes.ts),
 * and how each column is compressed. With `--copy-to`, the records of `<data-dir>` (a relay's
 * recording of the simulator's mix, say) are appended again into a new store at `<dir>` by the
 * store's own `append`, one batch per second of record time as the recorder writes them, `--repeat`
 * times (each copy an hour later): what the store code of this checkout makes of the same messages,
 * read while it is open (log included) and after it is closed.
 */
import { rmSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { openDuckDbStore } from '../src/history/duckdb-store.ts';
import type { RecordedMessage } from '../src/history/store.ts';
import { columnStorage, recordedJson, storeFileBytes, streamKeys } from './history/store-bytes.ts';
import { fixed } from './lib/report.ts';

const HOUR_MS = 3_600_000;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { 'copy-to': { type: 'string' }, repeat: { type: 'string', default: '1' } },
});
const source = positionals[0];
if (source === undefined)
  throw new Error('usage: bench/history-bytes.ts <data-dir> [--copy-to <dir>] [--repeat N]');
const target = values['copy-to'];
const measured = target ?? source;
let openBytes: number | undefined;
if (target !== undefined) openBytes = await copyStore(source, target, Number(values.repeat));

const json = await recordedJson(measured);
const closedBytes = storeFileBytes(measured);
console.log(`${measured}: ${json.rows} messages, ${json.jsonBytes} bytes of JSON`);
for (const [channel, { rows, jsonBytes }] of Object.entries(json.byChannel))
  console.log(`  ${channel}: ${rows} messages, ${jsonBytes} bytes`);
if (openBytes !== undefined)
  console.log(`store while open (file + log): ${openBytes} bytes, ${fixed(openBytes / json.jsonBytes, 3)}x`);
console.log(`store closed: ${closedBytes} bytes, ${fixed(closedBytes / json.jsonBytes, 3)}x the JSON`);
for (const { column, compression, segments } of await columnStorage(measured))
  console.log(`  ${column}: ${compression} x ${segments}`);

/** Appends every record of `from` into a new store at `to`, a batch per second; the bytes while open. */
async function copyStore(from: string, to: string, repeat: number): Promise<number> {
  rmSync(to, { recursive: true, force: true });
  const records = await everyRecord(from);
  const store = await openDuckDbStore(to);
  const started = performance.now();
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
    const elapsed = performance.now() - started;
    const rows = records.length * repeat;
    console.log(
      `appended ${rows} rows in ${fixed(elapsed, 0)} ms (${fixed((elapsed * 1000) / rows, 1)} µs a row)`,
    );
    return storeFileBytes(to);
  } finally {
    await store.close();
  }
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
