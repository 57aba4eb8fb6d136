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
import { printSideBySide, runSideBySide, sideBySideOptions, sideBySideRun } from './lib/side-by-side.ts';

const { values } = parseArgs({
  options: {
    ...sideBySideOptions({ books: 300, windows: 10 }),
    'window-ms': { type: 'string', default: '10' },
    'against-ms': { type: 'string', default: '1' },
    uncompressed: { type: 'boolean', default: false },
  },
});
/** A `--coalesce-ms`: 0 (no coalescing) or more. */
const coalesceMsOf = (name: string, text: string): number => {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0) throw new Error(`--${name} must be a whole number, 0 or more`);
  return value;
};
const coalesceMs = coalesceMsOf('window-ms', values['window-ms']);
const againstMs = coalesceMsOf('against-ms', values['against-ms']);
const run = sideBySideRun(values);

const against = (label: string) => ({ label, options: { coalesceMs: againstMs } });
const figures = await runSideBySide({
  ...run,
  title: `coalesce side by side: ${run.books} changing books every second (${values.uncompressed ? 'uncompressed' : 'br'}), one client each; --coalesce-ms ${againstMs}, ${againstMs} and ${coalesceMs}`,
  compressed: !values.uncompressed,
  profileGroup: 'coalesce-side-by-side',
  arms: [
    against(`${againstMs} ms A`),
    against(`${againstMs} ms B`),
    { label: `${coalesceMs} ms`, options: { coalesceMs } },
  ],
});
printSideBySide(figures, `${againstMs} ms A`);
