/**
 * @module bench/scenarios/rest
 * Scenario 12, public resources live: S `rest` streams (distinct public GET paths of the simulator:
 * users' identity, profile, stats, positions, activity and net worth; markets' detail, YES and NO
 * holders, comments and activity) over N subscribers, each client subscribed to one path so that
 * every path has N / S subscribers; beside it the same shape on `book`: S depth-10 books of busy
 * markets over N subscribers. Both against one simulator, with the same poll interval and the same
 * `--upstream-rps`, twice what S streams ask for, so that every stream is asked once per interval. Per run: upstream requests per second (the simulator's count), the relay's polls per
 * second, its CPU time over the window (process.cpuUsage() of its process, in cores) and per poll,
 * and the updates delivered per second.
 */
import { canonicalRestPath } from '../../packages/protocol/src/protocol/rest-paths.ts';
import { measureBroadcast, type RunMetrics } from '../lib/broadcast-run.ts';
import type { BenchOptions } from '../lib/options.ts';
import { progress } from '../lib/progress.ts';
import { fixed, markdownTable, type Report, type Target, target } from '../lib/report.ts';
import { type RestCatalogue, restLoadPaths, simMarketsFor } from '../lib/rest-load.ts';
import { type Simulator, startSim } from '../lib/servers.ts';

const POLL_MS = 1_000;
/** Requests in flight at most: enough that a simulator slowed by a loaded machine keeps up. */
const UPSTREAM_CONCURRENCY = 64;
const SIM_TICK_MS = 100;
/** The SDK subscriber riding along checks every this-many-th stream. */
const SDK_SAMPLE_EVERY = 20;

export type RestLoadChannel = 'book' | 'rest';

export interface RestLoadRun {
  channel: RestLoadChannel;
  streams: number;
  subscribers: number;
  metrics: RunMetrics;
  /** Requests the simulator served per second, and the relay's successful polls of the channel. */
  upstreamRequestsPerSec: number;
  pollsPerSec: number;
  failedPollsPerSec: number;
  /** Mean time from request to parsed answer of those polls, ms. */
  meanPollMs: number;
  /** Relay CPU time per wall second (1 = one core), and per poll of the channel. */
  relayCpuShare: number;
  relayCpuPerPollUs: number;
}

export interface RestLoadResult {
  pollMs: number;
  upstreamRps: number;
  upstreamConcurrency: number;
  simMarkets: number;
  /** How many paths of each kind (template) the `rest` run subscribed. */
  pathKinds: Record<string, number>;
  runs: RestLoadRun[];
}

function kindsOf(paths: readonly string[]): Record<string, number> {
  const kinds: Record<string, number> = {};
  for (const path of paths) {
    const canonical = canonicalRestPath(path);
    const kind = canonical.ok ? canonical.value.template : 'refused';
    kinds[kind] = (kinds[kind] ?? 0) + 1;
  }
  return kinds;
}

export async function runRest(options: BenchOptions): Promise<RestLoadResult> {
  const streams = options.restStreams;
  const subscribers = options.restSubscribers;
  const simMarkets = simMarketsFor(streams);
  // Twice what S streams ask for at one poll per interval: neither load is held back by the budget.
  const upstreamRps = Math.ceil((2 * streams * 1000) / POLL_MS);
  const sim = await startSim(SIM_TICK_MS, simMarkets);
  try {
    if (sim.markets.length < streams)
      throw new Error(`the simulator has ${sim.markets.length} busy markets, fewer than ${streams} books`);
    const catalogue = await sim.child.request<RestCatalogue>('restCatalogue');
    const paths = restLoadPaths(catalogue.usernames, catalogue.heldMarkets, streams);
    const books = sim.markets.slice(0, streams);
    const runs: RestLoadRun[] = [];
    for (const channel of ['book', 'rest'] as const) {
      progress(
        `rest: ${streams} ${channel} streams over ${subscribers} subscribers, poll ${POLL_MS} ms, ` +
          `--upstream-rps ${upstreamRps}`,
      );
      runs.push(
        await measureLoad(
          options,
          sim,
          channel,
          channel === 'rest' ? paths : books,
          subscribers,
          upstreamRps,
        ),
      );
    }
    return {
      pollMs: POLL_MS,
      upstreamRps,
      upstreamConcurrency: UPSTREAM_CONCURRENCY,
      simMarkets,
      pathKinds: kindsOf(paths),
      runs,
    };
  } finally {
    await sim.child.stop();
  }
}

async function measureLoad(
  options: BenchOptions,
  sim: Simulator,
  channel: RestLoadChannel,
  streams: string[],
  subscribers: number,
  upstreamRps: number,
): Promise<RestLoadRun> {
  const sample = streams.filter((_, i) => i % SDK_SAMPLE_EVERY === 0);
  const metrics = await measureBroadcast({
    kind: 'relay',
    clients: [
      channel === 'rest'
        ? { label: 'subscribers', count: subscribers, channel, assign: 'one-each', paths: streams }
        : {
            label: 'subscribers',
            count: subscribers,
            channel,
            depth: 10,
            assign: 'one-each',
            markets: streams,
          },
    ],
    server: {
      upstream: sim.url,
      pollMs: POLL_MS,
      upstreamRps,
      upstreamConcurrency: UPSTREAM_CONCURRENCY,
      cpuProf: options.cpuProf,
      profileName: `relay-${channel}-${streams.length}`,
    },
    warmupMs: options.warmupMs,
    windowMs: options.windowMs,
    sdkCheck: channel === 'rest' ? { paths: sample } : { markets: sample, depth: 10 },
    upstream: sim.child,
  });
  const polls = metrics.upstream?.pollsPerSec ?? {};
  const pollsPerSec = polls[`${channel}:ok`] ?? 0;
  return {
    channel,
    streams: streams.length,
    subscribers,
    metrics,
    upstreamRequestsPerSec: metrics.upstream?.requestsPerSec ?? Number.NaN,
    pollsPerSec,
    failedPollsPerSec: (polls[`${channel}:error`] ?? 0) + (polls[`${channel}:not_found`] ?? 0),
    meanPollMs: metrics.upstream?.meanPollMs[`${channel}:ok`] ?? Number.NaN,
    relayCpuShare: metrics.serverCpuShare,
    relayCpuPerPollUs: (metrics.serverCpuMs * 1000) / Math.max(1, pollsPerSec * metrics.windowS),
  };
}

export function restReport(result: RestLoadResult): Report {
  const targets: Target[] = [];
  const rows = result.runs.map((run) => {
    const frames = Object.values(run.metrics.groups).reduce(
      (sum, group) => ({
        messages: sum.messages + group.messages + group.other,
        statuses: sum.statuses + group.statuses,
        sampled: sum.sampled + group.sampled,
        failed: sum.failed + group.sampleFailures,
      }),
      { messages: 0, statuses: 0, sampled: 0, failed: 0 },
    );
    return [
      run.channel,
      run.streams,
      `${run.metrics.connected} of ${run.subscribers}`,
      fixed(run.upstreamRequestsPerSec, 1),
      fixed(run.pollsPerSec, 1),
      fixed(run.failedPollsPerSec, 1),
      fixed(run.meanPollMs, 1),
      fixed(run.relayCpuShare, 3),
      fixed(run.relayCpuPerPollUs, 0),
      fixed(run.metrics.upstream?.simCpuShare ?? Number.NaN, 3),
      fixed(frames.messages / run.metrics.windowS, 0),
      fixed(run.metrics.deliveriesPerSec, 0),
      fixed(frames.statuses / run.metrics.windowS, 1),
      fixed(run.metrics.meanFrameBytes, 0),
      `${run.metrics.sdk?.updates ?? 0} / ${run.metrics.sdk?.resyncs ?? 0}; ${frames.sampled} / ${frames.failed}`,
    ];
  });
  for (const run of result.runs) {
    // One request per stream per interval, whatever the subscribers: the relay's whole promise.
    const perStream = run.upstreamRequestsPerSec / ((run.streams * 1000) / result.pollMs);
    targets.push(
      target(
        `${run.streams} ${run.channel} streams over ${run.subscribers} subscribers: upstream req/s over streams/interval`,
        perStream,
        1.1,
      ),
    );
  }
  const kinds = Object.entries(result.pathKinds)
    .map(([kind, count]) => `${kind} ${count}`)
    .join(', ');
  const section =
    `### 12. \`rest\` against \`book\`: streams over subscribers, poll ${result.pollMs} ms, ` +
    `--upstream-rps ${result.upstreamRps} (both), --upstream-concurrency ${result.upstreamConcurrency}\n\n` +
    markdownTable(
      [
        'channel',
        'streams',
        'subscribers',
        'upstream req/s',
        'polls/s',
        'failed polls/s',
        'poll ms (mean)',
        'relay CPU (cores)',
        'relay CPU µs/poll',
        'simulator CPU (cores)',
        'messages delivered/s',
        'of them updates/s',
        'status/s',
        'update B',
        'checked: SDK updates / resyncs; sampled / failed',
      ],
      rows,
    ) +
    `\n\nSimulator: ${result.simMarkets} markets, ticking every ${SIM_TICK_MS} ms. Messages besides ` +
    `updates: \`confirmed\` (a quiet stream, every 5 s) and \`status\` (a stream gone stale, or live ` +
    `again). \`rest\` paths: ${kinds}.`;
  return { section, targets };
}
