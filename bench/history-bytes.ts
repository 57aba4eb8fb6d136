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
import { parseArgs } from 'node:util';
import { columnStorage, copyStore, recordedJson, storeFileBytes } from './history/store-bytes.ts';
import { fixed } from './lib/report.ts';

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
if (target !== undefined) {
  const copy = await copyStore(source, target, Number(values.repeat));
  console.log(
    `appended ${copy.rows} rows in ${fixed(copy.ms, 0)} ms (${fixed((copy.ms * 1000) / copy.rows, 1)} µs a row, ` +
      `${fixed(copy.cpuUs / copy.rows, 1)} µs of CPU a row with its checkpoints)`,
  );
  openBytes = copy.openBytes;
}

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
