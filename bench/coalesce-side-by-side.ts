/**
 * @module bench/coalesce-side-by-side
 * `node --import tsx bench/coalesce-side-by-side.ts [--window-ms 10] [--against-ms 1] [--books 300] [--windows 10] [--window-s 10] [--uncompressed] [--cpu-prof]`:
 * what the write window for busy connections (docs/operations.md "Write coalescing") saves and
 * costs the busiest kind of client, one that holds hundreds of books. Three relays side by side
 * (bench/lib/side-by-side.ts), each polling the same changing books every second for one client
 * holding all of them: two with `--coalesce-ms` at `--against-ms` (1 ms: frames still leave at the
 * end of each turn, the window all but gone) and one at `--window-ms` (the default, 10). The
 * simulator answers `br` unless `--uncompressed`, as poll-capacity's compressed arm. Per relay:
 * CPU per book poll, and the client's latency from `rts`, the price of the window.
 */
import { parseArgs } from 'node:util';
import { progress } from './lib/progress.ts';
import { machineInfo } from './lib/report.ts';
import { printSideBySide, runSideBySide } from './lib/side-by-side.ts';

const { values } = parseArgs({
  options: {
    'window-ms': { type: 'string', default: '10' },
    'against-ms': { type: 'string', default: '1' },
    books: { type: 'string', default: '300' },
    windows: { type: 'string', default: '10' },
    'window-s': { type: 'string', default: '10' },
    'warmup-s': { type: 'string', default: '20' },
    uncompressed: { type: 'boolean', default: false },
    'cpu-prof': { type: 'boolean', default: false },
  },
});
const coalesceMs = Number(values['window-ms']);
const againstMs = Number(values['against-ms']);
const books = Number(values.books);
const windows = Number(values.windows);
const windowMs = Number(values['window-s']) * 1000;
const warmupMs = Number(values['warmup-s']) * 1000;
for (const [name, value] of Object.entries({ coalesceMs, againstMs, books, windows, windowMs, warmupMs }))
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a number, 0 or more`);

const machine = machineInfo();
progress(
  `coalesce side by side: ${books} changing books every second (${values.uncompressed ? 'uncompressed' : 'br'}), one client each; --coalesce-ms ${againstMs}, ${againstMs} and ${coalesceMs}; ${windows} windows of ${windowMs / 1000} s; ${machine.nproc} cores, node ${machine.node}`,
);
const against = (label: string) => ({ label, options: { coalesceMs: againstMs } });
const figures = await runSideBySide({
  books,
  windows,
  windowMs,
  warmupMs,
  compressed: !values.uncompressed,
  cpuProf: values['cpu-prof'],
  profileGroup: 'coalesce-side-by-side',
  arms: [
    against(`${againstMs} ms A`),
    against(`${againstMs} ms B`),
    { label: `${coalesceMs} ms`, options: { coalesceMs } },
  ],
});
printSideBySide(figures, `${againstMs} ms A`);
