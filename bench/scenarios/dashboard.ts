/**
 * @module bench/scenarios/dashboard
 * Scenario 13, dashboards (issue 36): N clients each holding the depth-10 books of the same 100
 * busy markets, every change (raw) against `"interval": 1000` (docs/protocol.md "Per-subscription
 * options"); and N clients on the `price` streams of the same markets, raw against a `threshold`.
 * Each pair of arms runs raw, option, option, raw (eight relays one after the other against one
 * simulator, with the same polls), so that a drift of the shared machine's speed over the four
 * weighs on both arms alike; the targets compare the means of each arm's two runs. Per arm the
 * messages and bytes each client read per second, the relay's CPU time per client, and the
 * requests upstream served per second, which a per-subscription option must leave unchanged.
 * A relay that refuses an arm's option (`bad_request`) or does not echo it in `subscribed` has
 * that arm reported as not available; the others still run.
 */
import { measureBroadcast, type RunMetrics } from '../lib/broadcast-run.ts';
import type { BenchOptions } from '../lib/options.ts';
import { progress } from '../lib/progress.ts';
import { fixed, markdownTable, type Report, type Target, target } from '../lib/report.ts';
import { type Simulator, startSim } from '../lib/servers.ts';
import { probeSubscribe } from '../lib/subscribe-probe.ts';

const DASHBOARD_BOOKS = 100;
/** Markets of the simulator: about four in five have a two-sided quote, so at least 100 are busy. */
const SIM_MARKETS = 130;
/**
 * Busy books: the simulator moves every book every 10 ms (`--dashboard-tick-ms`), so each poll of a
 * book finds it changed and a raw client is sent an update on every poll, ten a second. At a tick
 * as long as the poll, about one poll in seven finds the top ten levels as they were.
 */
const DASHBOARD_POLL_MS = 100;
const DASHBOARD_DEPTH = 10;
const DASHBOARD_INTERVAL_MS = 1_000;
/**
 * One cent. The simulator's midpoint moves half a cent or less on about half of its changes (the
 * touch of a 0.01-tick market jittering by one tick moves the midpoint 0.005; 22 of the 100 markets
 * quote in 0.001 ticks) and a cent or more on the rest, as the fair price wanders one or two ticks:
 * a threshold of one cent keeps the moves a dashboard shows and drops the jitter.
 */
const DASHBOARD_THRESHOLD = '0.01';
/** Enough headroom that the budget never holds a poll back: 100 books + 1 batch every 100 ms. */
const UPSTREAM_RPS = 5_000;
const UPSTREAM_CONCURRENCY = 64;

type DashboardArmName = 'book' | 'book, interval' | 'price' | 'price, threshold';

export interface DashboardArm {
  name: DashboardArmName;
  /** 1 or 2: the arm's first or second run of its pair (raw, option, option, raw). */
  run: number;
  channel: 'book' | 'price';
  /** The per-subscription option of the arm, as sent (none: every change). */
  option: Record<string, unknown>;
  /** Set when the relay refused or ignored the option: the arm was not measured. */
  unavailable?: string;
  metrics?: RunMetrics;
  /** Per client, per second of the window. */
  messagesPerClientPerSec: number;
  /** What each client's socket read (every frame, with its WebSocket header). */
  bytesPerClientPerSec: number;
  /** The relay's CPU time per client: ms of CPU per second of wall time. */
  relayCpuMsPerClientPerSec: number;
  upstreamRequestsPerSec: number;
  /** The relay's successful polls of the arm's channel per second. */
  pollsPerSec: number;
}

export interface DashboardResult {
  clients: number;
  books: number;
  depth: number;
  pollMs: number;
  simTickMs: number;
  intervalMs: number;
  threshold: string;
  arms: DashboardArm[];
}

interface ArmSpec {
  name: DashboardArmName;
  channel: 'book' | 'price';
  option: { interval?: number; threshold?: string };
}

/** Raw, then with its option: each pair runs raw, option, option, raw. */
const PAIRS: [ArmSpec, ArmSpec][] = [
  [
    { name: 'book', channel: 'book', option: {} },
    { name: 'book, interval', channel: 'book', option: { interval: DASHBOARD_INTERVAL_MS } },
  ],
  [
    { name: 'price', channel: 'price', option: {} },
    { name: 'price, threshold', channel: 'price', option: { threshold: DASHBOARD_THRESHOLD } },
  ],
];

/** Thrown by the probe before any client connects: the arm's option is not this relay's. */
class OptionUnavailable extends Error {}

export async function runDashboard(options: BenchOptions): Promise<DashboardResult> {
  const sim = await startSim(options.dashboardTickMs, SIM_MARKETS);
  try {
    if (sim.markets.length < DASHBOARD_BOOKS)
      throw new Error(`the simulator has ${sim.markets.length} busy markets, fewer than ${DASHBOARD_BOOKS}`);
    const markets = sim.markets.slice(0, DASHBOARD_BOOKS);
    const arms: DashboardArm[] = [];
    for (const [raw, paced] of PAIRS) {
      const order: [ArmSpec, number][] = [
        [raw, 1],
        [paced, 1],
        [paced, 2],
        [raw, 2],
      ];
      for (const [arm, run] of order) {
        progress(
          `dashboard: ${options.dashboardClients} clients x ${markets.length} ${arm.channel} streams, ` +
            `${optionText(arm.option)}, poll ${DASHBOARD_POLL_MS} ms, run ${run}`,
        );
        arms.push({ ...(await measureArm(options, sim, markets, arm, run)), run });
      }
    }
    return {
      clients: options.dashboardClients,
      books: markets.length,
      depth: DASHBOARD_DEPTH,
      pollMs: DASHBOARD_POLL_MS,
      simTickMs: options.dashboardTickMs,
      intervalMs: DASHBOARD_INTERVAL_MS,
      threshold: DASHBOARD_THRESHOLD,
      arms,
    };
  } finally {
    await sim.child.stop();
  }
}

function optionText(option: Record<string, unknown>): string {
  const entries = Object.entries(option);
  return entries.length === 0
    ? 'every change'
    : entries.map(([name, value]) => `${name}: ${JSON.stringify(value)}`).join(', ');
}

async function measureArm(
  options: BenchOptions,
  sim: Simulator,
  markets: string[],
  arm: ArmSpec,
  run: number,
): Promise<Omit<DashboardArm, 'run'>> {
  const label = 'dashboards';
  const unmeasured = { messagesPerClientPerSec: 0, bytesPerClientPerSec: 0, relayCpuMsPerClientPerSec: 0 };
  try {
    const metrics = await measureBroadcast({
      kind: 'relay',
      clients: [
        {
          label,
          count: options.dashboardClients,
          channel: arm.channel,
          assign: 'all',
          markets,
          ...(arm.channel === 'book' ? { depth: DASHBOARD_DEPTH } : {}),
          ...arm.option,
        },
      ],
      server: {
        upstream: sim.url,
        pollMs: DASHBOARD_POLL_MS,
        upstreamRps: UPSTREAM_RPS,
        upstreamConcurrency: UPSTREAM_CONCURRENCY,
        cpuProf: options.cpuProf,
        profileName: `relay-dashboard-${arm.name.replace(/\W+/g, '-')}-${run}`,
      },
      warmupMs: options.warmupMs,
      windowMs: options.windowMs,
      upstream: sim.child,
      beforeConnect: (url) => expectOption(url, markets[0]!, arm),
    });
    const group = metrics.groups[label]!;
    const perClientPerSec = (value: number): number => value / metrics.windowS / metrics.connected;
    return {
      ...arm,
      metrics,
      messagesPerClientPerSec: perClientPerSec(group.messages),
      bytesPerClientPerSec: perClientPerSec(group.socketBytes),
      relayCpuMsPerClientPerSec: perClientPerSec(metrics.serverCpuMs),
      upstreamRequestsPerSec: metrics.upstream?.requestsPerSec ?? Number.NaN,
      pollsPerSec: metrics.upstream?.pollsPerSec[`${arm.channel}:ok`] ?? 0,
    };
  } catch (error) {
    if (!(error instanceof OptionUnavailable)) throw error;
    progress(`  not available: ${error.message}`);
    return {
      ...arm,
      unavailable: error.message,
      ...unmeasured,
      upstreamRequestsPerSec: Number.NaN,
      pollsPerSec: Number.NaN,
    };
  }
}

/**
 * The relay must accept the arm's option and echo it in `subscribed`, as it echoes `interval`: a
 * relay that drops an option it does not know would otherwise be measured as if it applied it.
 */
async function expectOption(url: string, market: string, arm: ArmSpec): Promise<void> {
  if (Object.keys(arm.option).length === 0) return;
  const answer = await probeSubscribe(url, {
    channel: arm.channel,
    markets: [market],
    ...(arm.channel === 'book' ? { depth: DASHBOARD_DEPTH } : {}),
    ...arm.option,
  });
  if (answer.type === 'error')
    throw new OptionUnavailable(`the relay answered ${answer.code}: ${answer.message}`);
  for (const [name, value] of Object.entries(arm.option)) {
    if (answer.echo[name] !== value)
      throw new OptionUnavailable(
        `the relay's \`subscribed\` does not echo ${name} ${JSON.stringify(value)}`,
      );
  }
}

/** What the targets compare of an arm: the mean of its runs. */
type ArmFigures = Pick<
  DashboardArm,
  | 'channel'
  | 'option'
  | 'messagesPerClientPerSec'
  | 'bytesPerClientPerSec'
  | 'relayCpuMsPerClientPerSec'
  | 'upstreamRequestsPerSec'
  | 'pollsPerSec'
>;

/** The mean of the arm's measured runs; undefined when none was measured. */
function armMean(result: DashboardResult, name: DashboardArmName): ArmFigures | undefined {
  const runs = result.arms.filter((arm) => arm.name === name && arm.unavailable === undefined);
  const first = runs[0];
  if (first === undefined) return undefined;
  const mean = (figure: (arm: DashboardArm) => number): number =>
    runs.reduce((sum, arm) => sum + figure(arm), 0) / runs.length;
  return {
    channel: first.channel,
    option: first.option,
    messagesPerClientPerSec: mean((arm) => arm.messagesPerClientPerSec),
    bytesPerClientPerSec: mean((arm) => arm.bytesPerClientPerSec),
    relayCpuMsPerClientPerSec: mean((arm) => arm.relayCpuMsPerClientPerSec),
    upstreamRequestsPerSec: mean((arm) => arm.upstreamRequestsPerSec),
    pollsPerSec: mean((arm) => arm.pollsPerSec),
  };
}

/**
 * An option adds no upstream request: upstream's requests per poll of the relay, the larger arm's
 * over the smaller's. Per poll, because a relay short of CPU (the raw arm's, beside its generator
 * on 2 cores) keeps its poll schedule less closely, which is fewer requests, not more.
 */
function upstreamSpread(a: ArmFigures, b: ArmFigures): number {
  const perPoll = (arm: ArmFigures): number => arm.upstreamRequestsPerSec / arm.pollsPerSec;
  return Math.max(perPoll(a), perPoll(b)) / Math.min(perPoll(a), perPoll(b));
}

function pairTargets(
  result: DashboardResult,
  raw: ArmFigures | undefined,
  paced: ArmFigures | undefined,
  bytesLimit: number | undefined,
): Target[] {
  if (raw === undefined || paced === undefined) return [];
  const shape = `dashboard ${result.clients} x ${result.books} ${paced.channel}, ${optionText(paced.option)}`;
  return [
    ...(bytesLimit === undefined
      ? []
      : [
          target(
            `${shape}: bytes per client over raw`,
            paced.bytesPerClientPerSec / raw.bytesPerClientPerSec,
            bytesLimit,
          ),
        ]),
    target(
      `${shape}: relay CPU per client over raw`,
      paced.relayCpuMsPerClientPerSec / raw.relayCpuMsPerClientPerSec,
      1,
    ),
    target(`${shape}: upstream requests per poll, larger arm over smaller`, upstreamSpread(raw, paced), 1.1),
  ];
}

export function dashboardReport(result: DashboardResult): Report {
  const book = armMean(result, 'book');
  const price = armMean(result, 'price');
  const targets = [
    ...pairTargets(result, book, armMean(result, 'book, interval'), 0.2),
    ...pairTargets(result, price, armMean(result, 'price, threshold'), undefined),
  ];
  const rows = result.arms.map((arm) => {
    const raw = arm.channel === 'book' ? book : price;
    if (arm.unavailable !== undefined || arm.metrics === undefined)
      return [arm.channel, optionText(arm.option), String(arm.run), `not available: ${arm.unavailable}`];
    const { metrics } = arm;
    const group = Object.values(metrics.groups)[0]!;
    const isRaw = PAIRS.some(([rawSpec]) => rawSpec.name === arm.name);
    const versusRaw = (value: number, rawValue: number | undefined): string =>
      isRaw || rawValue === undefined ? '' : ` (${fixed(value / rawValue, 2)} x)`;
    return [
      arm.channel,
      optionText(arm.option),
      String(arm.run),
      `${metrics.connected} of ${metrics.clients}`,
      fixed(arm.messagesPerClientPerSec, 1) +
        versusRaw(arm.messagesPerClientPerSec, raw?.messagesPerClientPerSec),
      fixed(arm.bytesPerClientPerSec / 1000, 1) +
        versusRaw(arm.bytesPerClientPerSec, raw?.bytesPerClientPerSec),
      fixed(group.messages > 0 ? group.bytes / group.messages : Number.NaN, 0),
      fixed(arm.relayCpuMsPerClientPerSec, 3) +
        versusRaw(arm.relayCpuMsPerClientPerSec, raw?.relayCpuMsPerClientPerSec),
      fixed(metrics.serverCpuShare, 3),
      fixed(arm.upstreamRequestsPerSec, 1),
      fixed(arm.pollsPerSec, 1),
      fixed(metrics.upstream?.meanPollMs[`${arm.channel}:ok`] ?? Number.NaN, 0),
      fixed(metrics.generatorCpuShare, 2),
      `${group.sampled} / ${group.sampleFailures}`,
    ];
  });
  const section =
    `### 13. Dashboards: ${result.clients} clients x ${result.books} busy markets, every change ` +
    `against \`interval: ${result.intervalMs}\` (book, depth ${result.depth}) and ` +
    `\`threshold: "${result.threshold}"\` (price)\n\n` +
    markdownTable(
      [
        'channel',
        'option',
        'run',
        'clients',
        'messages/client/s',
        'KB/client/s',
        'message B (mean)',
        'relay CPU ms/client/s',
        'relay CPU (cores)',
        'upstream req/s',
        'polls/s',
        'poll ms (mean)',
        'generator CPU (cores)',
        'checked: frames / failed',
      ],
      rows,
    ) +
    `\n\nSimulator: every book moves every ${result.simTickMs} ms; the relay polls books and prices ` +
    `every ${result.pollMs} ms. Each row is its own relay, one after the other (raw, option, option, ` +
    'raw for each channel), against the same simulator. KB are what each client socket read (JSON, ' +
    'no deflate); ratios in brackets are over the mean of the raw runs of the channel, and the ' +
    "targets compare each arm's mean of two runs. Relay CPU is all-in: it includes the polls, the " +
    'same in each row. One client of each row decodes every frame and checks `seq` and the book ' +
    'checksum.';
  return { section, targets };
}
