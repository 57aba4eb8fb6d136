/**
 * @module bench/run
 * `npm run bench`: every scenario of issue 5, each side by side with its baselines in this one
 * invocation; prints Markdown tables and the targets, and writes bench/results/latest.json.
 * Every child process is stopped on exit, on an error and on Ctrl-C.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { type HistoryResult, historyReport, runHistory } from './history/scenario.ts';
import { killAllChildren } from './lib/ipc.ts';
import { parseOptions } from './lib/options.ts';
import { progress } from './lib/progress.ts';
import { fixed, machineInfo, markdownTable, type Report, type Target } from './lib/report.ts';
import { startSim } from './lib/servers.ts';
import {
  bytesReport,
  clusterReport,
  clusterSpreadReport,
  compressionReport,
  diffReport,
  fanoutMultiReport,
  fanoutReport,
  freshnessReport,
  marketsReport,
  memoryReport,
  upstreamReport,
} from './reports.ts';
import { type BytesResult, runBytes } from './scenarios/bytes.ts';
import { type CapacityResult, runCapacity } from './scenarios/capacity.ts';
import { capacityReport } from './scenarios/capacity-report.ts';
import { type ClusterResult, runCluster } from './scenarios/cluster.ts';
import { type ClusterSpreadResult, runClusterSpread } from './scenarios/cluster-spread.ts';
import { type CompressionResult, runCompression } from './scenarios/compression.ts';
import { type DashboardResult, dashboardReport, runDashboard } from './scenarios/dashboard.ts';
import { type DiffRun, runDiff } from './scenarios/diff.ts';
import { type FanoutResult, type PollingCost, runFanout } from './scenarios/fanout.ts';
import { type MultiShapeResult, runFanoutMulti } from './scenarios/fanout-multi.ts';
import { type FreshnessResult, runFreshness } from './scenarios/freshness.ts';
import { type MarketsResult, runMarkets } from './scenarios/markets.ts';
import { type MemoryResult, runMemory } from './scenarios/memory.ts';
import { type PollCapacityResult, runPollCapacity } from './scenarios/poll-capacity.ts';
import { pollCapacityReport } from './scenarios/poll-capacity-report.ts';
import { type RestLoadResult, restReport, runRest } from './scenarios/rest.ts';
import {
  type RollingRestartResult,
  rollingRestartReport,
  runRollingRestart,
} from './scenarios/rolling-restart.ts';
import { runUpstream, type UpstreamResult } from './scenarios/upstream.ts';

process.on('SIGINT', () => {
  killAllChildren();
  process.exit(130);
});
process.on('SIGTERM', () => {
  killAllChildren();
  process.exit(143);
});
process.on('exit', () => killAllChildren());

const options = parseOptions(process.argv.slice(2));
const startedAt = new Date();
/** The machine may be shared: CPU time is what compares, and the load says how noisy latency was. */
const loadAtStart = loadavg();
const machine = machineInfo();
const selected = new Set(options.only);
progress(`market-relay benchmarks: ${options.only.join(', ')}${options.quick ? ' (quick)' : ''}`);
progress(`${machine.nproc} cores, ${machine.cpuModel}, node ${machine.node}`);
if (options.cpuProf) progress('--cpu-prof: relay CPU figures include profiler overhead; do not compare them');

const results: {
  diff?: DiffRun[];
  fanout?: { pollingCost: PollingCost; results: FanoutResult[] };
  fanoutMulti?: MultiShapeResult[];
  markets?: MarketsResult;
  memory?: MemoryResult;
  upstream?: UpstreamResult;
  bytes?: BytesResult;
  compression?: CompressionResult;
  freshness?: FreshnessResult;
  pollCapacity?: PollCapacityResult;
  cluster?: ClusterResult;
  clusterSpread?: ClusterSpreadResult;
  rest?: RestLoadResult;
  dashboard?: DashboardResult;
  capacity?: CapacityResult;
  rollingRestart?: RollingRestartResult;
  history?: HistoryResult;
} = {};
const sections: string[] = [];
const targets: Target[] = [];
const report = (scenario: Report): void => {
  sections.push(scenario.section);
  targets.push(...scenario.targets);
};

const sim = await startSim();
try {
  if (selected.has('diff')) {
    const runs = runDiff(options);
    results.diff = runs;
    report(diffReport(runs));
  }

  if (selected.has('fanout')) {
    const fanout = await runFanout(options, sim);
    results.fanout = fanout;
    report(fanoutReport(fanout));
  }

  if (selected.has('fanout-multi')) {
    const shapes = await runFanoutMulti(options);
    results.fanoutMulti = shapes;
    report(fanoutMultiReport(shapes));
  }

  if (selected.has('markets')) {
    const markets = await runMarkets(options, sim);
    results.markets = markets;
    report(marketsReport(markets));
  }

  if (selected.has('memory')) {
    const memory = await runMemory(options, sim);
    results.memory = memory;
    report(memoryReport(memory));
  }

  if (selected.has('upstream')) {
    const upstream = await runUpstream(options, sim);
    results.upstream = upstream;
    report(upstreamReport(upstream));
  }

  if (selected.has('bytes')) {
    const bytes = await runBytes(options);
    results.bytes = bytes;
    report(bytesReport(bytes));
  }

  if (selected.has('compression')) {
    const compression = await runCompression(options, sim);
    results.compression = compression;
    report(compressionReport(compression));
  }

  if (selected.has('freshness')) {
    const freshness = await runFreshness(options);
    results.freshness = freshness;
    report(freshnessReport(freshness));
  }

  if (selected.has('poll-capacity')) {
    const pollCapacity = await runPollCapacity(options);
    results.pollCapacity = pollCapacity;
    report(pollCapacityReport(pollCapacity));
  }

  if (selected.has('cluster')) {
    const cluster = await runCluster(options, sim);
    results.cluster = cluster;
    report(clusterReport(cluster));
    const spread = await runClusterSpread(options);
    results.clusterSpread = spread;
    report(clusterSpreadReport(spread));
  }

  if (selected.has('rest')) {
    const rest = await runRest(options);
    results.rest = rest;
    report(restReport(rest));
  }

  if (selected.has('dashboard')) {
    const dashboard = await runDashboard(options);
    results.dashboard = dashboard;
    report(dashboardReport(dashboard));
  }

  if (selected.has('capacity')) {
    const capacity = await runCapacity(options);
    results.capacity = capacity;
    report(capacityReport(capacity, machine.openFilesLimit));
  }
  if (selected.has('rolling-restart')) {
    const rolling = await runRollingRestart(options, sim);
    results.rollingRestart = rolling;
    report(rollingRestartReport(rolling));
  }
  if (selected.has('history')) {
    const history = await runHistory(options);
    results.history = history;
    report(historyReport(history));
  }
} finally {
  await sim.child.stop();
}

const targetTable = markdownTable(
  ['target', 'measured', 'limit', 'met'],
  targets.map((t) => [
    t.name,
    `${fixed(t.value, t.unit === 'ms' ? 3 : 2)} ${t.unit}`,
    `${t.limit} ${t.unit}`,
    t.met ? 'yes' : 'NO',
  ]),
);
console.log(`\n## market-relay benchmarks, ${startedAt.toISOString()}\n`);
console.log(
  `${machine.nproc} cores (nproc), ${machine.cpuModel}, node ${machine.node}, ${machine.platform}, ` +
    `${machine.totalMemoryGb} GB RAM, ulimit -n ${machine.openFilesLimit}\n`,
);
const loadAtEnd = loadavg();
console.log(
  `load average (1, 5, 15 min) at start ${loadAtStart.map((n) => n.toFixed(2)).join(', ')}, ` +
    `at end ${loadAtEnd.map((n) => n.toFixed(2)).join(', ')}\n`,
);
console.log(
  `command: npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}\n`,
);
for (const section of sections) console.log(`${section}\n`);
if (targets.length > 0) console.log(`### Targets (ratios from this run)\n\n${targetTable}\n`);

const file = fileURLToPath(new URL('./results/latest.json', import.meta.url));
mkdirSync(fileURLToPath(new URL('./results/', import.meta.url)), { recursive: true });
writeFileSync(
  file,
  `${JSON.stringify(
    {
      timestamp: startedAt.toISOString(),
      durationS: (Date.now() - startedAt.getTime()) / 1000,
      machine,
      load: { start: loadAtStart, end: loadAtEnd },
      options,
      results,
      targets,
    },
    null,
    2,
  )}\n`,
);
progress(`wrote ${file}`);
