/**
 * @module bench/scenarios/rolling-restart
 * A deploy without a stampede (issue 51): three relay processes over one Redis, 3,000 plain
 * WebSocket clients that know nothing of `going_away` and reconnect at once, to the next relay,
 * whenever their socket closes, and 300 SDK clients, which follow the hint and resume. Each relay in
 * turn gets SIGTERM, drains over `--drain-ms` and is replaced at its address by a new process
 * (test/support/cluster/rolling-drain.ts, the same driver as the suite's mechanism test). Measured:
 * the most clients any relay received in one second (the target: a fifth of all clients at most),
 * SDK clients that lost continuity, the cluster's busiest upstream second against its budget (the
 * simulator's request log), and each relay's time from SIGTERM to its exit and its exit code. The
 * same restart with `--drain-ms 0` (every connection closed at once, as before the drain) is the
 * comparison.
 */
import { type ChildRelay, startChildRelay } from '../../test/support/cluster/child-relay.ts';
import { startRedis } from '../../test/support/cluster/redis-server.ts';
import {
  busiestSecond,
  ClientFleet,
  type RollingFigures,
  rollingRestart,
} from '../../test/support/cluster/rolling-drain.ts';
import type { BenchOptions } from '../lib/options.ts';
import { progress } from '../lib/progress.ts';
import { fixed, markdownTable, type Report, type Target, target } from '../lib/report.ts';
import type { Simulator } from '../lib/servers.ts';

const RELAYS = 3;
const UPSTREAM_RPS = 50;
/** The program's default drain window, and the comparison without one. */
const DRAIN_WINDOWS_MS = [10_000, 0];
/** Waiting for every client to be back and live after a restart, at most. */
const SETTLE_MS = 120_000;

export interface RollingRestartRun {
  drainMs: number;
  plainClients: number;
  sdkClients: number;
  figures: RollingFigures;
  /** The cluster's upstream requests in its busiest second of the restart. */
  busiestUpstreamSecond: number;
  /**
   * The same count as `figures.busiestSecondByRelay`, by the relays' own clocks (their
   * `client_connected` log lines): what each relay accepted, whatever the clients' process was doing.
   */
  relayLoggedBusiestSecond: number[];
}

export interface RollingRestartResult {
  upstreamRps: number;
  runs: RollingRestartRun[];
}

export async function runRollingRestart(
  options: BenchOptions,
  sim: Simulator,
): Promise<RollingRestartResult> {
  const runs: RollingRestartRun[] = [];
  for (const drainMs of DRAIN_WINDOWS_MS) runs.push(await runOnce(options, sim, drainMs));
  return { upstreamRps: UPSTREAM_RPS, runs };
}

async function runOnce(options: BenchOptions, sim: Simulator, drainMs: number): Promise<RollingRestartRun> {
  const plainClients = options.quick ? 300 : 3_000;
  const sdkClients = options.quick ? 30 : 300;
  const redis = await startRedis();
  const args = [
    `--upstream=${sim.url}`,
    `--redis=${redis.url}`,
    '--book-poll-ms=500',
    '--price-poll-ms=1000',
    `--upstream-rps=${UPSTREAM_RPS}`,
    '--lease-ms=1000',
    `--drain-ms=${drainMs}`,
    // Every client connects from 127.0.0.1: the per-address edge limits would refuse a move.
    '--max-connections-per-address=100000',
    '--connection-rate-per-address=100000',
    '--connection-burst-per-address=100000',
    '--max-pending-per-address=100000',
    '--max-pending-connections=100000',
    // `client_connected` lines: each relay's own time of every connection it accepted.
    '--log-level=info',
  ];
  const relays: ChildRelay[] = await Promise.all(Array.from({ length: RELAYS }, () => startChildRelay(args)));
  const urls = relays.map((relay) => relay.url);
  /** Every process that served each address: the first relay, then its replacement. */
  const served = relays.map((relay) => [relay]);
  const fleet = new ClientFleet(urls);
  try {
    progress(
      `rolling restart, --drain-ms ${drainMs}: placing ${plainClients} plain and ${sdkClients} SDK clients`,
    );
    await fleet.place(plainClients, sdkClients, sim.markets.slice(0, 10), 300);
    await sim.child.request('clearRequests');
    progress('rolling restart: each relay in turn gets SIGTERM and is replaced');
    const restartedAt = Date.now();
    const figures = await rollingRestart(
      {
        urls,
        async stop(index) {
          await relays[index]!.stop('SIGTERM');
          return relays[index]!.process.exitCode;
        },
        async replace(index) {
          relays[index] = await startChildRelay([...args, `--port=${new URL(urls[index]!).port}`]);
          served[index]!.push(relays[index]!);
        },
      },
      fleet,
      SETTLE_MS,
    );
    const busiestUpstreamSecond = await sim.child.request<number>('busiestSecond');
    const relayLoggedBusiestSecond = served.map((processes) =>
      busiestSecond(
        processes.flatMap((relay) => connectedAt(relay.output())).filter((at) => at >= restartedAt),
      ),
    );
    return { drainMs, plainClients, sdkClients, figures, busiestUpstreamSecond, relayLoggedBusiestSecond };
  } finally {
    await fleet.close();
    await Promise.all(relays.map((relay) => relay.stop('SIGKILL')));
    await redis.stop();
  }
}

/** The times (ms) of a relay's `client_connected` log lines. */
function connectedAt(output: string): number[] {
  return [...output.matchAll(/"time":(\d+)[^\n]*"event":"client_connected"/g)].map((match) =>
    Number(match[1]),
  );
}

export function rollingRestartReport(result: RollingRestartResult): Report {
  const rows = result.runs.map((run) => {
    const clients = run.plainClients + run.sdkClients;
    const busiest = Math.max(...run.relayLoggedBusiestSecond);
    const seen = Math.max(...run.figures.busiestSecondByRelay);
    return [
      run.drainMs,
      `${run.plainClients} + ${run.sdkClients}`,
      `${busiest} (${fixed((busiest / clients) * 100, 1)} %)`,
      run.relayLoggedBusiestSecond.join(' / '),
      `${seen} (${fixed((seen / clients) * 100, 1)} %)`,
      `${run.figures.sdkWithGap} of ${run.sdkClients}`,
      `${run.busiestUpstreamSecond} of ${result.upstreamRps}`,
      run.figures.stops.map((stop) => `${stop.exitCode} in ${fixed(stop.stopMs / 1000, 1)} s`).join(' / '),
      fixed(run.figures.restartMs / 1000, 0),
    ];
  });
  const section =
    `### Rolling restart of 3 draining relays over Redis: plain clients reconnecting at once, SDK clients following going_away\n\n` +
    markdownTable(
      [
        '--drain-ms',
        'plain + SDK clients',
        'most clients one relay accepted in one second (its log)',
        'per relay (0 / 1 / 2)',
        'the same as the clients saw it',
        'SDK clients with a gap',
        'busiest upstream second (requests of budget)',
        'exit code, SIGTERM to exit (each relay)',
        'restart, s',
      ],
      rows,
    );
  const targets: Target[] = [];
  const drained = result.runs.find((run) => run.drainMs > 0);
  if (drained !== undefined) {
    const clients = drained.plainClients + drained.sdkClients;
    const busiest = Math.max(...drained.relayLoggedBusiestSecond);
    const slowest = Math.max(...drained.figures.stops.map((stop) => stop.stopMs));
    targets.push(
      target(
        'rolling restart: most clients one relay accepted in a second, share of all',
        busiest / clients,
        0.2,
      ),
      target('rolling restart: SDK clients with a gap', drained.figures.sdkWithGap, 0, 'clients'),
      target(
        'rolling restart: busiest upstream second over the budget',
        drained.busiestUpstreamSecond / result.upstreamRps,
        1,
      ),
      target(
        'rolling restart: slowest exit after SIGTERM, s',
        slowest / 1000,
        (drained.drainMs + 5_000) / 1000,
        's',
      ),
      target(
        'rolling restart: relays not exiting 0',
        drained.figures.stops.filter((stop) => stop.exitCode !== 0).length,
        0,
        'relays',
      ),
    );
  }
  return { section, targets };
}
