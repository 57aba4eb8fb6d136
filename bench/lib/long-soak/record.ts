/**
 * @module bench/lib/long-soak/record
 * The long soak's record: the pass criteria of issue 51 judged on the samples, each figure's
 * growth after the warm-up per relay, what the crowd and upstream went through, and the plot.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { median } from '../latency.ts';
import {
  type Criterion,
  eventLoopCriterion,
  flatCriterion,
  growthAfterWarmup,
  type Point,
} from './analysis.ts';
import type { CrowdReport } from './clients.ts';
import { FIGURES, type Figure, type RelaySample } from './sampler.ts';
import { type RunEvent, smallMultiplesSvg } from './svg.ts';
import type { DriverCounts } from './upstream-driver.ts';

const fixed = (value: number, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');

export interface ObserverEnd {
  relay: string;
  live: number;
  streams: number;
  largestGapMs: number;
  closedWith: number | undefined;
}

export interface SoakRun {
  title: string;
  command: string;
  startedAt: Date;
  minutes: number;
  /** New clients a second asked of the crowd (`--rate`). */
  rate: number;
  sampleSeconds: number;
  warmupMinutes: number;
  relays: string[];
  /** The options every relay ran with beyond its upstream and Redis (absent in records before they were named). */
  relayArgs?: string[];
  /** The niceness of the crowd and the simulator (absent in records before they yielded). */
  harnessNiceness?: number;
  /** Per relay, in the order of `relays`. */
  samples: RelaySample[][];
  /** The machine's 1-minute load average at each sample (it is shared). */
  load: Point[];
  /** The share of the machine's CPU time the hypervisor took at each sample, % (absent before 2026-12-06). */
  steal?: Point[];
  events: RunEvent[];
  crowd: CrowdReport;
  turnover: DriverCounts;
  observers: ObserverEnd[];
  machine: string;
  /** Relays or Redis that died during the run. */
  crashes: string[];
}

const FLAT_FIGURES: readonly [Figure, string][] = [
  ['heapAfterGcMb', 'heap used after GC'],
  ['rssMb', 'RSS'],
  ['fds', 'open file descriptors'],
  ['handles', 'active handles'],
  ['redisKeys', 'Redis keys'],
];

/** Figures that do not move with this relay's own clients: fitted without the connections held. */
const NOT_PER_CONNECTION: readonly Figure[] = ['connections', 'redisKeys', 'redisMemoryMb'];

export function series(run: SoakRun, figure: Figure): Point[][] {
  const withConnections = !NOT_PER_CONNECTION.includes(figure);
  return run.samples.map((samples) =>
    samples
      .filter((sample) => Number.isFinite(sample[figure]))
      .map((sample) => ({
        minute: sample.minute,
        value: sample[figure],
        ...(withConnections ? { connections: sample.connections } : {}),
      })),
  );
}

export function criteria(run: SoakRun): Criterion[] {
  const clustered = run.samples.some((samples) => samples.some((sample) => sample.redisKeys > 0));
  const flat = FLAT_FIGURES.filter(([figure]) => figure !== 'redisKeys' || clustered).map(([figure, name]) =>
    flatCriterion(
      `${name}: within 5 % of minute ${fixed(run.warmupMinutes, 1)} at the end, or fitted growth < 1 %/h`,
      // Redis keys are one figure for the cluster: every relay reads the same Redis.
      figure === 'redisKeys' ? series(run, figure).slice(0, 1) : series(run, figure),
      run.warmupMinutes,
    ),
  );
  const observersLive = run.observers.every(
    (observer) => observer.streams > 0 && observer.live === observer.streams,
  );
  return [
    ...flat,
    eventLoopCriterion(series(run, 'eventLoopP99Ms'), run.steal),
    {
      name: 'every well-behaved observer stream `live` at the end',
      measured: run.observers
        .map((observer) => `${observer.relay}: ${observer.live}/${observer.streams}`)
        .join(', '),
      pass: observersLive,
    },
    {
      name: 'no relay died',
      measured: run.crashes.length === 0 ? 'none' : run.crashes.join('; '),
      pass: run.crashes.length === 0,
    },
  ];
}

function table(headers: string[], rows: string[][]): string {
  return [
    `| ${headers.join(' | ')} |`,
    `|${headers.map(() => '---').join('|')}|`,
    ...rows.map((row) => `| ${row.join(' | ')} |`),
  ].join('\n');
}

const counts = (record: Record<string, number>) =>
  Object.entries(record)
    .map(([key, value]) => `${key} x${value}`)
    .join(', ') || 'none';

export function plot(run: SoakRun): string {
  return smallMultiplesSvg(
    FIGURES.map(([figure, title, unit]) => ({ title, unit, series: series(run, figure) })),
    run.relays,
    { title: run.title, totalMinutes: run.minutes, warmupMinutes: run.warmupMinutes, events: run.events },
  );
}

export function markdownRecord(run: SoakRun, plotFile: string): string {
  const judged = criteria(run);
  const figureRows = FIGURES.flatMap(([figure, title, unit]) =>
    series(run, figure).map((points, index) => {
      const growth = growthAfterWarmup(points, run.warmupMinutes);
      const values = points.map((point) => point.value);
      return [
        `${title} (${unit})`,
        run.relays[index]!,
        fixed(growth.atWarmup, 1),
        fixed(growth.atEnd, 1),
        fixed(growth.endChangePercent, 1),
        fixed(growth.percentPerHour, 2),
        fixed(growth.percentPerHourConnectionsHeld, 2),
        `${fixed(Math.min(...values), 1)} .. ${fixed(Math.max(...values), 1)}`,
      ];
    }),
  );
  const loads = run.load.map((point) => point.value);
  return `# ${run.title}

${run.startedAt.toISOString()}, \`${run.command}\`: ${run.minutes} minutes of load, sampled every
${run.sampleSeconds} s, growth fitted after a ${fixed(run.warmupMinutes, 1)}-minute warm-up. Machine: ${run.machine}; it is shared
with other work: its 1-minute load average went from ${fixed(Math.min(...loads), 1)} to ${fixed(Math.max(...loads), 1)} (median ${fixed(median(loads), 1)}).${stealSentence(run.steal)}${
    run.relayArgs === undefined
      ? ''
      : `
Every relay ran with \`${run.relayArgs.join(' ')}\` (bench/long-soak.ts says why).`
  }${
    run.harnessNiceness === undefined
      ? ''
      : ` The crowd and the simulator ran at niceness ${run.harnessNiceness}, the relays${
          run.relays.length > 1 ? ', Redis' : ''
        } and the sampler at 0 (bench/lib/long-soak/processes.ts says why).`
  }

![figures over time](${plotFile})

## Pass criteria (issue 51)

${table(
  ['criterion', 'measured', 'result'],
  judged.map((criterion) => [criterion.name, criterion.measured, criterion.pass ? 'pass' : '**FAIL**']),
)}

"At minute ${fixed(run.warmupMinutes, 1)}" is the mean of the samples within half a minute of it, "at the end" the
mean of the last minute's: a sample is one instant of figures that move with the clients connected
at that instant. The slope is a least-squares fit of every sample after the warm-up, in % of the
minute-${fixed(run.warmupMinutes, 1)} value per hour; beside it the same fit with the relay's WebSocket
connections at each sample as a second regressor (value = a + b x minute + c x connections), which
is the growth with the crowd held constant: the crowd a relay holds at one instant swings when a
busy machine delays its handshakes, and heap, fds and handles swing with it. A figure passes on
any of the three. Heap and RSS are read right after a full GC the sampler forces
through the relay's inspector; the event-loop delay p99 is the relay's own
\`market_relay_nodejs_eventloop_lag_p99_seconds\` over the time since the previous sample (how late
its probe timer ran).

## Figures

${table(['figure', 'relay', `at minute ${fixed(run.warmupMinutes, 1)}`, 'at end', 'change %', 'fitted %/h', 'fitted %/h, connections held', 'range'], figureRows)}

## Load

- Clients started: ${counts(run.crowd.started)} (${fixed(run.crowd.arrivalsPerSecond, 0)} a second); opened ${run.crowd.opened}; refused (HTTP) ${counts(run.crowd.refused)}.
- Errors the relays answered: ${counts(run.crowd.errors)}.
- Closed by the relay: ${counts(run.crowd.closedByRelay)}; socket errors ${run.crowd.socketErrors}.
- Upstream: ${run.turnover.expired} markets expired, ${run.turnover.added} appeared, ${run.turnover.deleted} deleted after ending (turnover steps that failed: ${run.turnover.failures}).
- Events: ${run.events.map((event) => `${event.label} at ${fixed(event.minute, 1)} min`).join('; ') || 'none'}.
- Observers (book depth 10 and price of 5 markets each, throughout): ${run.observers
    .map(
      (observer) =>
        `${observer.relay} ${observer.live}/${observer.streams} live, largest gap ${fixed(observer.largestGapMs / 1000, 1)} s${observer.closedWith === undefined ? '' : `, CLOSED ${observer.closedWith}`}`,
    )
    .join('; ')}.
`;
}

/**
 * Writes bench/results/<date>-long-soak[-cluster].md (the record), .svg (the plot) and .json (the
 * samples, gitignored: `--report-from` reads them); prints each criterion; true when all pass.
 */
export function writeRecord(run: SoakRun): boolean {
  const directory = new URL('../../results/', import.meta.url);
  mkdirSync(directory, { recursive: true });
  const clustered = run.relays.length > 1;
  // A run of other than the issue's length or rate is named by them, beside the issue's runs.
  const shape = run.minutes === 30 && run.rate === 100 ? '' : `-${run.minutes}min-${run.rate}per-s`;
  const base = `${run.startedAt.toISOString().slice(0, 10)}-long-soak${clustered ? '-cluster' : ''}${shape}`;
  writeFileSync(new URL(`${base}.svg`, directory), plot(run));
  writeFileSync(new URL(`${base}.json`, directory), `${JSON.stringify(run, null, 1)}\n`);
  writeFileSync(new URL(`${base}.md`, directory), markdownRecord(run, `${base}.svg`));
  const judged = criteria(run);
  for (const criterion of judged) {
    process.stdout.write(`${criterion.pass ? 'pass' : 'FAIL'}  ${criterion.name}: ${criterion.measured}\n`);
  }
  process.stdout.write(`record: bench/results/${base}.md\n`);
  return judged.every((criterion) => criterion.pass);
}

/** How much of the machine its hypervisor took (steal), when the run read it. */
function stealSentence(steal: readonly Point[] | undefined): string {
  const values = (steal ?? []).map((point) => point.value).filter(Number.isFinite);
  if (values.length === 0) return '';
  return ` The hypervisor took ${fixed(median(values), 1)} % of its CPU time in the median sample and ${fixed(Math.max(...values), 1)} % at most (steal, /proc/stat).`;
}
