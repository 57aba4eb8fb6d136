/**
 * @module bench/lib/side-by-side
 * Relays side by side: several relays as shipped poll the same changing books at the same time,
 * every second each, one WebSocket client on each subscribed to all of them at depth 10, and in
 * each window every relay's CPU per book poll. Run after run, the floor of `npm run bench --
 * poll-capacity` moved more between two arms than a few per cent sought; side by side, a machine's
 * load weighs on every relay alike in every window. The first two arms are the same reference, so
 * that their ratio shows how finely the measure sees; each further arm differs in one thing.
 */

import { bookPolls, type PollCounts, UPSTREAM_CONNECTIONS } from './book-polls.ts';
import { type Child, forkChild } from './ipc.ts';
import { type LatencySummary, median } from './latency.ts';
import { progress, sleep } from './progress.ts';
import { machineInfo } from './report.ts';
import {
  type ServerOptions,
  type ServerUnderTest,
  SHIPPED_RELAY_NODE_FLAGS,
  startServer,
  startSim,
} from './servers.ts';
import { type UsageSample, usageBetween } from './usage.ts';

const SIM_TICK_MS = 100;
const POLL_MS = 1_000;

/** One relay: its label, and what it is launched with besides the shipped relay's settings. */
export interface ArmSpec {
  label: string;
  options?: Pick<ServerOptions, 'otel' | 'coalesceMs'>;
}

/** What every side-by-side bench takes from its command line (`sideBySideOptions`). */
export interface SideBySideRun {
  books: number;
  windows: number;
  windowMs: number;
  warmupMs: number;
  cpuProf: boolean;
}

export interface SideBySidePlan extends SideBySideRun {
  /** What runs, for the run's first line (the windows and the machine follow it). */
  title: string;
  /** The simulator answers `br` as asked (as a CDN does); uncompressed without. */
  compressed: boolean;
  /** Profiles go to bench/results/profiles/<profileGroup>/<label>. */
  profileGroup: string;
  /** In start order. */
  arms: readonly ArmSpec[];
}

/** The `parseArgs` options every side-by-side bench takes, with its own default books and windows. */
export function sideBySideOptions(defaults: { books: number; windows: number }) {
  return {
    books: { type: 'string', default: String(defaults.books) },
    windows: { type: 'string', default: String(defaults.windows) },
    'window-s': { type: 'string', default: '10' },
    'warmup-s': { type: 'string', default: '20' },
    'cpu-prof': { type: 'boolean', default: false },
  } as const;
}

/** Those options read; an error names the first that is not a positive number. */
export function sideBySideRun(values: {
  books: string;
  windows: string;
  'window-s': string;
  'warmup-s': string;
  'cpu-prof': boolean;
}): SideBySideRun {
  return {
    books: positive('books', values.books),
    windows: positive('windows', values.windows),
    windowMs: positive('window-s', values['window-s']) * 1000,
    warmupMs: positive('warmup-s', values['warmup-s']) * 1000,
    cpuProf: values['cpu-prof'],
  };
}

/** `text` as a number greater than 0, or an error naming `name`. */
export function positive(name: string, text: string): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number`);
  return value;
}

export interface ArmFigures {
  label: string;
  /** CPU per book poll, µs, in each window. */
  perPoll: number[];
  pollsPerSecond: number[];
  /** Its client's latency from `rts` over all the windows. */
  latency: LatencySummary;
}

interface Arm {
  label: string;
  relay: ServerUnderTest;
  generator: Child;
}

interface Reading {
  usage: UsageSample;
  polls: PollCounts;
}

export async function runSideBySide(plan: SideBySidePlan): Promise<ArmFigures[]> {
  const machine = machineInfo();
  progress(
    `${plan.title}; ${plan.windows} windows of ${plan.windowMs / 1000} s; ${machine.nproc} cores, node ${machine.node}`,
  );
  // 200 busy books want about 250 markets (some are expired, resolved or one-sided).
  const sim = await startSim(SIM_TICK_MS, Math.ceil(plan.books * 1.25) + 50, plan.compressed);
  const arms: Arm[] = [];
  try {
    const markets = sim.markets.slice(0, plan.books);
    if (markets.length < plan.books) throw new Error(`the simulator has only ${markets.length} busy markets`);
    for (const { label, options } of plan.arms) {
      const relay = await startServer('relay', {
        ...options,
        upstream: sim.url,
        pollMs: POLL_MS,
        upstreamConcurrency: UPSTREAM_CONNECTIONS,
        nodeFlags: SHIPPED_RELAY_NODE_FLAGS,
        cpuProf: plan.cpuProf,
        profileName: `${plan.profileGroup}/${label.replaceAll(' ', '-')}`,
      });
      const generator = await forkChild('generator');
      arms.push({ label, relay, generator });
      await generator.request('connect', {
        kind: 'relay',
        url: relay.url,
        groups: [{ label: 'books', count: 1, channel: 'book', depth: 10, assign: 'all', markets }],
      });
    }
    await Promise.all(arms.map((arm) => arm.generator.request('awaitFirst', { timeoutMs: 60_000 }, 90_000)));
    await sleep(plan.warmupMs);
    await Promise.all(arms.map((arm) => arm.generator.request('reset')));

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
    for (let window = 1; window <= plan.windows; window++) {
      await sleep(plan.windowMs);
      const after = await read();
      const figures = arms.map((arm, index) => {
        const usage = usageBetween(before[index]!.usage, after[index]!.usage);
        const polls = bookPolls(before[index]!.polls, after[index]!.polls, 'ok');
        const cpuPerPoll = usage.cpuUs / Math.max(1, polls);
        const rate = (polls * 1000) / usage.wallMs;
        perPoll[index]!.push(cpuPerPoll);
        pollsPerSecond[index]!.push(rate);
        return `${arm.label} ${cpuPerPoll.toFixed(0)} µs/poll at ${rate.toFixed(0)}/s`;
      });
      progress(`  window ${window}: ${figures.join('; ')}`);
      before = after;
    }
    return await Promise.all(
      arms.map(async (arm, index) => {
        const stats = await arm.generator.request<{ latency: LatencySummary }>('stats');
        return {
          label: arm.label,
          perPoll: perPoll[index]!,
          pollsPerSecond: pollsPerSecond[index]!,
          latency: stats.latency,
        };
      }),
    );
  } finally {
    for (const arm of arms) {
      await arm.generator.stop();
      await arm.relay.child.stop();
    }
    await sim.child.stop();
  }
}

/** Each arm's medians and latency, then every other arm's CPU per poll over `reference`'s, by window. */
export function printSideBySide(figures: readonly ArmFigures[], reference: string): void {
  console.log(
    `\n| relay | µs per book poll (median) | book polls a second (median) | latency p50 / p99 / max ms |\n|---|---|---|---|`,
  );
  for (const arm of figures) {
    const { p50Ms, p99Ms, maxMs } = arm.latency;
    console.log(
      `| ${arm.label} | ${median(arm.perPoll).toFixed(0)} | ${median(arm.pollsPerSecond).toFixed(0)} | ${p50Ms.toFixed(1)} / ${p99Ms.toFixed(1)} / ${maxMs.toFixed(1)} |`,
    );
  }
  const base = figures.find((arm) => arm.label === reference);
  if (base === undefined) throw new Error(`no arm ${reference}`);
  console.log(`\n| ratio | median | range over the windows |\n|---|---|---|`);
  for (const arm of figures) {
    if (arm === base) continue;
    const ratios = arm.perPoll.map((value, index) => value / base.perPoll[index]!);
    console.log(
      `| ${arm.label} / ${base.label} | ${median(ratios).toFixed(3)}x | ${Math.min(...ratios).toFixed(3)}x to ${Math.max(...ratios).toFixed(3)}x |`,
    );
  }
}
