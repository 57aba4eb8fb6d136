/**
 * @module bench/soak
 * `npm run soak [-- --quick]`: the long version of the hardening tests (docs/reliability.md). One
 * relay child with the shipped limits and an embedded simulator; a well-behaved observer client
 * throughout; then, one after the other, floods, churn, slow consumers, upstream faults and stalled
 * status-page viewers, each for a fixed time. Prints one table: what the observer saw (largest gap
 * between two messages of one stream, ping round trips, streams live), the relay's CPU and RSS, and
 * how the attackers' connections ended. Bounded: about 3 minutes, 1.5 with --quick.
 */
import {
  type Attack,
  type AttackReport,
  churn,
  flood,
  slowConsumers,
  stalledViewers,
} from './lib/attackers.ts';
import { forkChild, killAllChildren } from './lib/ipc.ts';
import { Observer, type ObserverReport } from './lib/observer.ts';
import { progress, sleep } from './lib/progress.ts';
import { fixed, machineInfo, markdownTable } from './lib/report.ts';
import { type UsageSample, usageBetween } from './lib/usage.ts';

process.on('SIGINT', () => {
  killAllChildren();
  process.exit(130);
});
process.on('exit', () => killAllChildren());

const quick = process.argv.includes('--quick');
const scale = quick ? 0.5 : 1;

interface Scenario {
  name: string;
  load: string;
  seconds: number;
  start(url: string, markets: string[]): Attack | undefined;
  faults?: Record<string, number>;
}

const scenarios: Scenario[] = [
  { name: 'baseline', load: 'observer alone', seconds: 10, start: () => undefined },
  {
    name: 'flood',
    load: '1 connection, pings as fast as it can, reading',
    seconds: 15,
    start: (url) => flood(url, { connections: 1, reading: true }),
  },
  {
    name: 'non-reading flood',
    load: '1 connection, pings as fast as it can, never reads',
    seconds: 15,
    start: (url) => flood(url, { connections: 1, reading: false }),
  },
  {
    name: '20 flooders',
    load: '20 connections from one address, flooding, reconnecting',
    seconds: 15,
    start: (url) => flood(url, { connections: 20, reading: true }),
  },
  {
    name: 'churn',
    load: '20 lanes: connect, subscribe, close, again',
    seconds: 15,
    start: (url, markets) => churn(url, markets, { parallel: 20 }),
  },
  {
    name: 'slow consumers',
    load: '50 clients on every full book, not reading',
    seconds: 25,
    start: (url, markets) => slowConsumers(url, markets, 50),
  },
  {
    name: 'upstream faults',
    load: '30% 500s, 10% 429s, 10% malformed, +200 ms',
    seconds: 15,
    start: () => undefined,
    faults: { errorRate: 0.3, rateLimitRate: 0.1, malformedRate: 0.1, latencyMs: 200 },
  },
  {
    name: 'stalled status viewers',
    load: '20 `GET /status/events` viewers that never read',
    seconds: 45,
    start: (url) => stalledViewers(url, 20),
  },
];

interface Row {
  scenario: Scenario;
  observer: ObserverReport;
  cpuShare: number;
  rssStartMb: number;
  rssPeakMb: number;
  attack: AttackReport | undefined;
  viewersDropped: number;
  /** Close codes the relay decided in the window (its metric), beside what the clients saw. */
  relayCloses: (readonly [string, number])[];
  /** Observer streams live again within 15 s after the scenario (faults off, attackers gone). */
  recovered: boolean;
}

const machine = machineInfo();
progress(`market-relay soak${quick ? ' (quick)' : ''}: ${machine.nproc} cores, node ${machine.node}`);
const relay = await forkChild('soak-relay');
const { url, markets } = await relay.request<{ url: string; markets: string[] }>('ready');
const watched = markets.slice(0, 5);
const observer = await Observer.connect(url, watched);
const allLive = () => {
  const { live, streams } = observer.report();
  return streams === watched.length * 2 && live === streams;
};
await waitUntil(allLive, 15_000);

const rows: Row[] = [];
for (const scenario of scenarios) {
  const seconds = Math.max(5, Math.round(scenario.seconds * scale));
  progress(`${scenario.name}: ${scenario.load}, ${seconds} s`);
  const before = await relay.request<UsageSample>('usage');
  const stateBefore = await relay.request<RelayState>('state');
  observer.startWindow();
  if (scenario.faults !== undefined) await relay.request('faults', scenario.faults);
  const attack = scenario.start(url, markets);
  let rssPeak = before.rss;
  const until = Date.now() + seconds * 1000;
  while (Date.now() < until) {
    await sleep(1_000);
    // A relay too busy to answer within the window's second is reported by the figures, not waited for.
    const sample = await tryRequest<UsageSample>('usage', Math.max(1, until - Date.now()));
    rssPeak = Math.max(rssPeak, sample?.rss ?? 0);
  }
  const report = observer.report();
  const attackReport = await attack?.stop();
  const after = await relay.request<UsageSample>('usage', undefined, 30_000);
  if (scenario.faults !== undefined) {
    await relay.request('faults', { errorRate: 0, rateLimitRate: 0, malformedRate: 0, latencyMs: 0 });
  }
  const state = await relay.request<RelayState>('state');
  rows.push({
    scenario,
    observer: report,
    cpuShare: usageBetween(before, after).cpuShare,
    rssStartMb: before.rss / 2 ** 20,
    rssPeakMb: Math.max(rssPeak, after.rss) / 2 ** 20,
    attack: attackReport,
    viewersDropped: state.statusViewersDropped - stateBefore.statusViewersDropped,
    relayCloses: Object.entries(state.closeCodes)
      .map(([code, count]) => [code, count - (stateBefore.closeCodes[code] ?? 0)] as const)
      .filter(([, count]) => count > 0),
    recovered: await waitUntil(allLive, 15_000),
  });
}
observer.close();
await relay.stop();

const baselineGap = rows[0]?.observer.largestGapMs ?? Number.NaN;
process.stdout.write(
  `\n${markdownTable(
    [
      'scenario',
      'load',
      's',
      'largest gap ms (x baseline)',
      'ping p50 / p99 ms',
      'observer live',
      'relay CPU %',
      'relay RSS MB start -> peak',
      'attackers',
    ],
    rows.map((row) => [
      row.scenario.name,
      row.scenario.load,
      Math.max(5, Math.round(row.scenario.seconds * scale)),
      `${fixed(row.observer.largestGapMs, 0)} (${fixed(row.observer.largestGapMs / baselineGap, 1)}x)`,
      `${fixed(row.observer.pingP50Ms, 1)} / ${fixed(row.observer.pingP99Ms, 1)}`,
      `${row.observer.live}/${row.observer.streams}${row.recovered ? '' : ' (not recovered)'}`,
      fixed(row.cpuShare * 100, 0),
      `${fixed(row.rssStartMb, 0)} -> ${fixed(row.rssPeakMb, 0)} (+${fixed(row.rssPeakMb - row.rssStartMb, 0)})`,
      attackSummary(row),
    ]),
  )}\n`,
);

function attackSummary(row: Row): string {
  const parts: string[] = [];
  if (row.attack !== undefined) {
    const { connections, framesSent, repliesReceived, closeCodes } = row.attack;
    parts.push(`${connections} conn, ${framesSent} sent, ${repliesReceived} replies`);
    const codes = Object.entries(closeCodes).map(([code, count]) => `${code}x${count}`);
    if (codes.length > 0) parts.push(`clients saw ${codes.join(' ')}`);
  }
  const decided = row.relayCloses.map(([code, count]) => `${code}x${count}`);
  if (decided.length > 0) parts.push(`relay closed ${decided.join(' ')}`);
  if (row.viewersDropped > 0) parts.push(`${row.viewersDropped} viewers dropped`);
  if (row.observer.closedWith !== undefined) parts.push(`OBSERVER CLOSED ${row.observer.closedWith}`);
  return parts.join('; ');
}

interface RelayState {
  statusViewersDropped: number;
  closeCodes: Record<string, number>;
}

async function tryRequest<T>(command: string, timeoutMs: number): Promise<T | undefined> {
  try {
    return await relay.request<T>(command, undefined, timeoutMs);
  } catch {
    return undefined;
  }
}

async function waitUntil(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await sleep(100);
  }
  return true;
}
