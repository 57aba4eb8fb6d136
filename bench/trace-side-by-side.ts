/**
 * @module bench/trace-side-by-side
 * `node --import tsx bench/trace-side-by-side.ts [--ratio 0.01] [--books 200] [--windows 12] [--window-s 10] [--traced-first] [--cpu-prof]`:
 * what tracing book polls at `--ratio` costs a whole relay (issue 51: at most 3 % more CPU per book
 * poll than untraced, in the same run). Three relays side by side (bench/lib/side-by-side.ts): two
 * untraced and one tracing to an OTLP/HTTP receiver that drops the spans. The figures are the
 * medians over the windows of the traced relay's CPU per book poll over the first untraced one's,
 * and of the second untraced one's over the first (the same code on both sides: how finely this
 * measure sees).
 */
import { parseArgs } from 'node:util';
import { startOtlpSink } from './lib/otlp-sink.ts';
import { progress } from './lib/progress.ts';
import {
  type ArmSpec,
  positive,
  printSideBySide,
  runSideBySide,
  sideBySideOptions,
  sideBySideRun,
} from './lib/side-by-side.ts';

const { values } = parseArgs({
  options: {
    ...sideBySideOptions({ books: 200, windows: 12 }),
    ratio: { type: 'string', default: '0.01' },
    'traced-first': { type: 'boolean', default: false },
  },
});
const ratio = positive('ratio', values.ratio);
const run = sideBySideRun(values);

const sink = await startOtlpSink();
try {
  const traced: ArmSpec = {
    label: `traced at ${ratio}`,
    options: { otel: { endpoint: sink.url, sampleRatio: ratio } },
  };
  const untraced: ArmSpec[] = [{ label: 'untraced A' }, { label: 'untraced B' }];
  // `--traced-first` starts the traced relay first, to see that the order weighs nothing.
  const figures = await runSideBySide({
    ...run,
    title: `trace side by side: ${run.books} changing books every second, three relays (untraced, untraced, traced at ${ratio})`,
    compressed: false,
    profileGroup: 'trace-side-by-side',
    arms: values['traced-first'] ? [traced, ...untraced] : [...untraced, traced],
  });
  printSideBySide(figures, 'untraced A');
  progress(`spans received: ${sink.batches()} batches`);
} finally {
  await sink.close();
}
