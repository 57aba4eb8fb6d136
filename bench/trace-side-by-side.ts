/**
 * @module bench/trace-side-by-side
 * `node --import tsx bench/trace-side-by-side.ts [--ratio 0.01] [--books 200] [--windows 12] [--window-s 10] [--traced-first] [--cpu-prof]`:
 * what tracing book polls at `--ratio` costs a whole relay (issue 51: at most 3 % more CPU per book
 * poll than untraced, in the same run). Three relays as shipped poll the same changing books at the
 * same time, every second each, one WebSocket client on each subscribed to all of them at depth 10:
 * two untraced and one tracing to an OTLP/HTTP receiver that drops the spans. In each window, each
 * relay's CPU per book poll; the figures are the medians over the windows of the traced relay's
 * over the first untraced one's, and of the second untraced one's over the first (the same code on
 * both sides: how finely this measure sees). Side by side rather than one after the other, a
 * machine's load weighs on all three alike in every window: run after run, the floor of
 * `npm run bench -- poll-capacity` moved more between two arms than the effect sought.
 */
import { parseArgs } from 'node:util';
import { type Child, forkChild } from './lib/ipc.ts';
import { median } from './lib/latency.ts';
import { startOtlpSink } from './lib/otlp-sink.ts';
import { progress, sleep } from './lib/progress.ts';
import { machineInfo } from './lib/report.ts';
import { type ServerUnderTest, SHIPPED_RELAY_NODE_FLAGS, startServer, startSim } from './lib/servers.ts';
import { type UsageSample, usageBetween } from './lib/usage.ts';
import { CONNECTIONS } from './scenarios/poll-capacity.ts';
import { bookPolls, type PollCounts } from './scenarios/poll-capacity-windows.ts';

const { values } = parseArgs({
  options: {
    ratio: { type: 'string', default: '0.01' },
    books: { type: 'string', default: '200' },
    windows: { type: 'string', default: '12' },
    'window-s': { type: 'string', default: '10' },
    'warmup-s': { type: 'string', default: '20' },
    'traced-first': { type: 'boolean', default: false },
    'cpu-prof': { type: 'boolean', default: false },
  },
});
const ratio = Number(values.ratio);
const books = Number(values.books);
const windows = Number(values.windows);
const windowMs = Number(values['window-s']) * 1000;
const warmupMs = Number(values['warmup-s']) * 1000;
for (const [name, value] of Object.entries({ ratio, books, windows, windowMs, warmupMs }))
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`);

const SIM_TICK_MS = 100;
const POLL_MS = 1_000;

interface Arm {
  label: string;
  relay: ServerUnderTest;
  generator: Child;
}

interface Reading {
  usage: UsageSample;
  polls: PollCounts;
}

const machine = machineInfo();
progress(
  `trace side by side: ${books} changing books every ${POLL_MS} ms, three relays (untraced, untraced, traced at ${ratio}); ${windows} windows of ${windowMs / 1000} s; ${machine.nproc} cores, node ${machine.node}`,
);
// 200 busy books want about 250 markets (some are expired, resolved or one-sided).
const sim = await startSim(SIM_TICK_MS, Math.ceil(books * 1.25) + 50);
const sink = await startOtlpSink();
const arms: Arm[] = [];
try {
  const markets = sim.markets.slice(0, books);
  if (markets.length < books) throw new Error(`the simulator has only ${markets.length} busy markets`);
  const launch = async (label: string, traced: boolean): Promise<Arm> => {
    const relay = await startServer('relay', {
      upstream: sim.url,
      pollMs: POLL_MS,
      upstreamConcurrency: CONNECTIONS,
      nodeFlags: SHIPPED_RELAY_NODE_FLAGS,
      cpuProf: values['cpu-prof'],
      profileName: `trace-side-by-side/${label.replace(' ', '-')}`,
      ...(traced ? { otel: { endpoint: sink.url, sampleRatio: ratio } } : {}),
    });
    const generator = await forkChild('generator');
    await generator.request('connect', {
      kind: 'relay',
      url: relay.url,
      groups: [{ label: 'books', count: 1, channel: 'book', depth: 10, assign: 'all', markets }],
    });
    return { label, relay, generator };
  };
  // Started in turn: `--traced-first` starts the traced relay first, to see that the order weighs nothing.
  if (values['traced-first']) arms.push(await launch('traced', true));
  arms.push(await launch('untraced A', false), await launch('untraced B', false));
  if (!values['traced-first']) arms.push(await launch('traced', true));
  await Promise.all(arms.map((arm) => arm.generator.request('awaitFirst', { timeoutMs: 60_000 }, 90_000)));
  await sleep(warmupMs);

  const read = (): Promise<Reading[]> =>
    Promise.all(
      arms.map(async ({ relay }) => ({
        usage: await relay.child.request<UsageSample>('usage'),
        polls: await relay.child.request<PollCounts>('polls'),
      })),
    );
  const perPoll: number[][] = arms.map(() => []);
  const pollsPerSecond: number[][] = arms.map(() => []);
  let before = await read();
  for (let window = 1; window <= windows; window++) {
    await sleep(windowMs);
    const after = await read();
    const figures = arms.map((arm, index) => {
      const usage = usageBetween(before[index]!.usage, after[index]!.usage);
      const polls = bookPolls(before[index]!.polls, after[index]!.polls, 'ok');
      perPoll[index]!.push(usage.cpuUs / Math.max(1, polls));
      pollsPerSecond[index]!.push((polls * 1000) / usage.wallMs);
      return `${arm.label} ${(usage.cpuUs / Math.max(1, polls)).toFixed(0)} µs/poll at ${((polls * 1000) / usage.wallMs).toFixed(0)}/s`;
    });
    progress(`  window ${window}: ${figures.join('; ')}`);
    before = after;
  }
  const armed = (label: string) => perPoll[arms.findIndex((arm) => arm.label === label)]!;
  const [untracedA, untracedB, traced] = [armed('untraced A'), armed('untraced B'), armed('traced')];
  const ratios = (of: number[]) => of.map((value, index) => value / untracedA[index]!);
  const rows = [
    ['untraced B / untraced A (the measure itself)', ratios(untracedB)],
    [`traced at ${ratio} / untraced A`, ratios(traced)],
  ] as const;
  console.log(`\n| relay | µs per book poll (median) | book polls a second (median) |\n|---|---|---|`);
  for (const [index, arm] of arms.entries()) {
    const cpu = median(perPoll[index]!).toFixed(0);
    console.log(`| ${arm.label} | ${cpu} | ${median(pollsPerSecond[index]!).toFixed(0)} |`);
  }
  console.log(`\n| ratio | median | range over the windows |\n|---|---|---|`);
  for (const [label, values] of rows)
    console.log(
      `| ${label} | ${median(values).toFixed(3)}x | ${Math.min(...values).toFixed(3)}x to ${Math.max(...values).toFixed(3)}x |`,
    );
  progress(`spans received: ${sink.batches()} batches`);
} finally {
  for (const arm of arms) {
    await arm.generator.stop();
    await arm.relay.child.stop();
  }
  await sink.close();
  await sim.child.stop();
}
