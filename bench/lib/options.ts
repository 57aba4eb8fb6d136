/**
 * @module bench/lib/options
 * `npm run bench -- [SCENARIO...] [--only fanout,memory] [--quick] [--cpu-prof] [--fanout 1000,5000]
 * [--multi 500] [--single 2000] [--rest-streams 1000] [--rest-subscribers 10000] [--dashboard-clients 50] [--dashboard-tick-ms 10]
 * [--capacity-connections 15000] [--capacity-batch 2000] [--capacity-max-clients 18000] [--otel-sample-ratio 0.01]
 * [--history embedded|postgres|postgres://…] [--rounds 4]`: which scenarios (`npm run bench -- freshness` runs that one alone), how big and
 * how long. The full run is what docs/benchmarks.md records; --quick is a ~1 minute smoke run.
 */
import { parseArgs } from 'node:util';

export const scenarioNames = [
  'fanout',
  'fanout-multi',
  'markets',
  'memory',
  'upstream',
  'diff',
  'bytes',
  'compression',
  'freshness',
  'poll-capacity',
  'cluster',
  'rest',
  'dashboard',
  'capacity',
  'rolling-restart',
  'history',
] as const;
export type ScenarioName = (typeof scenarioNames)[number];

export interface BenchOptions {
  only: ScenarioName[];
  quick: boolean;
  /** Write a CPU profile of every relay child (bench/results/profiles). */
  cpuProf: boolean;
  /** Fan-out client counts. */
  fanoutClients: number[];
  /** fanout-multi: clients of the two 10-books-per-client shapes, and of the one-book shape. */
  multiClients: number;
  singleClients: number;
  /** fanout-multi: only the shapes whose name contains this (e.g. `same`, `of 100`, `one book`). */
  shape: string | undefined;
  /** Clients of the 20-markets scenario. */
  marketsClients: number;
  /** Idle subscribed connections of the memory scenario. */
  memoryConnections: number;
  /** Client counts of the upstream-load scenario. */
  upstreamClients: number[];
  /** Clients of the compression scenario. */
  compressionClients: number;
  /** `rest` scenario: distinct streams (paths, and books beside them) and subscribers over them. */
  restStreams: number;
  restSubscribers: number;
  /** `dashboard` scenario: clients each holding the 100 books (and the 100 prices). */
  dashboardClients: number;
  /** `dashboard` scenario: the simulator's tick, ms (every book moves on every tick). */
  dashboardTickMs: number;
  /** capacity: idle subscribed connections on one relay process; the ramp's batch of clients and its most. */
  capacityConnections: number;
  capacityBatch: number;
  capacityMaxClients: number;
  /** poll-capacity: a relay tracing at this ratio beside the untraced one (issue 51); none without. */
  otelSampleRatio: number | undefined;
  /** history: `embedded`; `postgres` (a private server) or a `postgres://…` URL: the shared store's arm beside it. */
  historyStore: string;
  /**
   * history: rounds of the recording arms, raised to whole sets of every start order of the arms
   * (default 4, 2 with --quick; with the shared store's arm 6): more narrow a noisy machine's mean.
   */
  historyRounds: number | undefined;
  /** Book sizes (levels per side) of the diff microbenchmark. */
  diffLevels: number[];
  warmupMs: number;
  windowMs: number;
  /** The history scenario's measured window (ms). */
  historyWindowMs: number;
}

export function parseOptions(argv: readonly string[]): BenchOptions {
  const { values, positionals } = parseArgs({
    args: [...argv],
    options: {
      only: { type: 'string' },
      quick: { type: 'boolean', default: false },
      'cpu-prof': { type: 'boolean', default: false },
      fanout: { type: 'string' },
      multi: { type: 'string' },
      single: { type: 'string' },
      shape: { type: 'string' },
      'rest-streams': { type: 'string' },
      'rest-subscribers': { type: 'string' },
      'dashboard-clients': { type: 'string' },
      'dashboard-tick-ms': { type: 'string' },
      'capacity-connections': { type: 'string' },
      'capacity-batch': { type: 'string' },
      'capacity-max-clients': { type: 'string' },
      'otel-sample-ratio': { type: 'string' },
      history: { type: 'string', default: 'embedded' },
      rounds: { type: 'string' },
      'window-ms': { type: 'string' },
    },
    strict: true,
    // `npm run bench -- fanout-multi` is `--only fanout-multi`.
    allowPositionals: true,
  });
  const named = [...positionals, ...(values.only?.split(',') ?? [])].map((name) => name.trim());
  const only = (named.length > 0 ? named : [...scenarioNames]).filter((name) => name.length > 0);
  for (const name of only) {
    if (!(scenarioNames as readonly string[]).includes(name))
      throw new Error(`unknown scenario "${name}" (expected some of ${scenarioNames.join(', ')})`);
  }
  const quick = values.quick ?? false;
  return {
    only: only as ScenarioName[],
    quick,
    cpuProf: values['cpu-prof'] ?? false,
    fanoutClients: values.fanout?.split(',').map(Number) ?? (quick ? [500] : [1_000, 5_000]),
    multiClients: Number(values.multi ?? (quick ? 200 : 500)),
    singleClients: Number(values.single ?? (quick ? 500 : 2_000)),
    shape: values.shape,
    marketsClients: quick ? 200 : 1_000,
    memoryConnections: quick ? 2_000 : 10_000,
    upstreamClients: quick ? [10, 100] : [10, 100, 1_000],
    compressionClients: quick ? 200 : 1_000,
    restStreams: positiveInteger('rest-streams', values['rest-streams'] ?? (quick ? '200' : '1000')),
    restSubscribers: positiveInteger(
      'rest-subscribers',
      values['rest-subscribers'] ?? (quick ? '2000' : '10000'),
    ),
    dashboardClients: positiveInteger(
      'dashboard-clients',
      values['dashboard-clients'] ?? (quick ? '20' : '50'),
    ),
    dashboardTickMs: positiveInteger('dashboard-tick-ms', values['dashboard-tick-ms'] ?? '10'),
    capacityConnections: positiveInteger(
      'capacity-connections',
      values['capacity-connections'] ?? (quick ? '2000' : '15000'),
    ),
    capacityBatch: positiveInteger('capacity-batch', values['capacity-batch'] ?? (quick ? '250' : '2000')),
    capacityMaxClients: positiveInteger(
      'capacity-max-clients',
      values['capacity-max-clients'] ?? (quick ? '1000' : '18000'),
    ),
    otelSampleRatio: ratio('otel-sample-ratio', values['otel-sample-ratio']),
    historyStore: values.history ?? 'embedded',
    historyRounds: values.rounds === undefined ? undefined : positiveInteger('rounds', values.rounds),
    diffLevels: [10, 100, 1_000, 10_000],
    warmupMs: quick ? 1_500 : 3_000,
    windowMs: windowMs(values['window-ms'], quick ? 4_000 : 12_000),
    // A history window holds seven flush windows and a checkpoint: with 12 s (three flushes) the
    // rounds of one run spread from 0.93x to 1.27x, with 30 s from 0.92x to 1.14x.
    historyWindowMs: windowMs(values['window-ms'], quick ? 4_000 : 30_000),
  };
}

function windowMs(text: string | undefined, otherwise: number): number {
  return text === undefined ? otherwise : positiveInteger('window-ms', text);
}

function positiveInteger(name: string, text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 1)
    throw new Error(`--${name} must be a positive integer, got "${text}"`);
  return value;
}

function ratio(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!(value >= 0 && value <= 1)) throw new Error(`--${name} must be a number from 0 to 1, got "${text}"`);
  return value;
}
