/**
 * @module bench/soak
 * `npm run soak [-- --quick]`: the long version of the hardening tests (docs/reliability.md). One
 * relay child with the shipped limits and an embedded simulator; a well-behaved observer client
 * throughout; then, one after the other, floods, churn, slow consumers, upstream faults, stalled
 * status-page viewers, a pending-connection lockout and key guessing, each for a fixed time. Prints
 * one table: what the observer saw (largest gap between two messages of one stream, ping round
 * trips, streams live), the relay's CPU and RSS, how the attackers' connections ended and, where an
 * attack targets newcomers, how many new clients and health checks got in. Bounded: about 4
 * minutes, 2 with --quick; `--only name,name` runs some scenarios (by name).
 *
 * `npm run soak -- --attacks [name,name]` runs the attacks from one address instead, each against a
 * relay of its own with the default options (bench/attack-soak.ts).
 *
 * `npm run soak -- --long [--minutes 30] [--redis]` runs the long soak instead: one relay (or three
 * over Redis) under turnover and faults for half an hour, sampled for leaks (bench/long-soak.ts).
 */
import WebSocket from 'ws';
import { forkChild, killAllChildren } from './lib/ipc.ts';
import { progress, sleep } from './lib/progress.ts';
import { fixed, machineInfo, markdownTable } from './lib/report.ts';
import { type AttackReport, type AttackSpec, wsUrl } from './lib/soak/attackers.ts';
import { Observer, type ObserverReport } from './lib/soak/observer.ts';
import { type UsageSample, usageBetween } from './lib/usage.ts';

if (process.argv.includes('--attacks')) {
  await import('./attack-soak.ts');
}
if (process.argv.includes('--long')) {
  await import('./long-soak.ts');
}
process.on('SIGINT', () => {
  killAllChildren();
  process.exit(130);
});
process.on('exit', () => killAllChildren());

const quick = process.argv.includes('--quick');
const scale = quick ? 0.5 : 1;
const onlyArgument = process.argv.indexOf('--only');
const only = onlyArgument < 0 ? undefined : new Set(process.argv[onlyArgument + 1]?.split(','));

interface Scenario {
  name: string;
  load: string;
  seconds: number;
  attack?: (markets: string[]) => AttackSpec;
  faults?: Record<string, number>;
  /** Newcomers tried meanwhile from another address: a WebSocket client and a `GET /health`, twice a second. */
  probe?: boolean;
}

const allScenarios: Scenario[] = [
  { name: 'baseline', load: 'observer alone', seconds: 10 },
  {
    name: 'flood',
    load: '1 connection, pings as fast as it can, reading',
    seconds: 15,
    attack: () => ({ kind: 'flood', connections: 1, reading: true }),
  },
  {
    name: 'non-reading flood',
    load: '1 connection, pings as fast as it can, never reads',
    seconds: 15,
    attack: () => ({ kind: 'flood', connections: 1, reading: false }),
  },
  {
    name: '20 flooders',
    load: '20 connections from one address, flooding, reconnecting',
    seconds: 15,
    attack: () => ({ kind: 'flood', connections: 20, reading: true }),
  },
  {
    name: 'churn',
    load: '20 lanes (20 addresses): connect, subscribe, close, again',
    seconds: 15,
    attack: (markets) => ({ kind: 'churn', parallel: 20, markets }),
  },
  {
    name: 'slow consumers',
    load: '50 clients (50 addresses) on every full book, not reading',
    seconds: 25,
    attack: (markets) => ({ kind: 'slowConsumers', count: 50, markets }),
  },
  {
    name: 'upstream faults',
    load: '30% 500s, 10% 429s, 10% malformed, +200 ms',
    seconds: 15,
    faults: { errorRate: 0.3, rateLimitRate: 0.1, malformedRate: 0.1, latencyMs: 200 },
  },
  {
    name: 'stalled status viewers',
    load: '20 `GET /status/events` viewers that never read',
    seconds: 45,
    attack: () => ({ kind: 'stalledViewers', count: 20 }),
  },
  {
    name: 'lockout',
    load: '60 addresses x 20 idle sockets, reconnected when closed',
    seconds: 20,
    attack: () => ({ kind: 'lockout', addresses: 60, perAddress: 20 }),
    probe: true,
  },
  {
    name: 'key guessing',
    load: 'wrong-key upgrades from one address, 20 at a time',
    seconds: 20,
    attack: () => ({ kind: 'keyGuessing', parallel: 20 }),
    probe: true,
  },
];
const scenarios = allScenarios.filter(
  (scenario) => only === undefined || only.has(scenario.name) || scenario.name === 'baseline',
);

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
  /** Connections the relay refused at the edge in the window, by reason (its metric). */
  refusals: (readonly [string, number])[];
  probe: ProbeReport | undefined;
}

const machine = machineInfo();
progress(`market-relay soak${quick ? ' (quick)' : ''}: ${machine.nproc} cores, node ${machine.node}`);
const relay = await forkChild('soak-relay');
// The attackers in a process of their own: their sending must not delay the observer's event loop.
const attackers = await forkChild('flooder');
const ready = await relay.request<{ url: string; key: string; markets: string[] }>('ready');
const { markets } = ready;
// Every client but the key guesser presents the relay's key.
const url = `${ready.url}/?token=${ready.key}`;
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
  if (scenario.attack !== undefined) {
    await attackers.request('start', { url, spec: scenario.attack(markets) });
  }
  let rssPeak = before.rss;
  const until = Date.now() + seconds * 1000;
  // Past the attack's first second, once it has taken what it can.
  const probing = scenario.probe === true ? sleep(1_000).then(() => probeNewcomers(until)) : undefined;
  while (Date.now() < until) {
    await sleep(1_000);
    // A relay too busy to answer within the window's second is reported by the figures, not waited for.
    const sample = await tryRequest<UsageSample>('usage', Math.max(1, until - Date.now()));
    rssPeak = Math.max(rssPeak, sample?.rss ?? 0);
  }
  const report = observer.report();
  const probe = await probing;
  const attackReport =
    scenario.attack === undefined
      ? undefined
      : await attackers.request<AttackReport>('stop', undefined, 30_000);
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
    refusals: Object.entries(state.refusals)
      .map(([reason, count]) => [reason, count - (stateBefore.refusals[reason] ?? 0)] as const)
      .filter(([, count]) => count > 0),
    probe,
    recovered: await waitUntil(allLive, 15_000),
  });
}
observer.close();
await attackers.stop();
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
      'new clients / health checks in',
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
      row.probe === undefined
        ? ''
        : `${row.probe.clientsIn}/${row.probe.tries}, ${row.probe.healthIn}/${row.probe.tries} (connect p99 ${fixed(row.probe.connectP99Ms, 0)} ms)`,
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
  const refused = row.refusals.map(([reason, count]) => `${reason}x${count}`);
  if (refused.length > 0) parts.push(`relay refused ${refused.join(' ')}`);
  if (row.viewersDropped > 0) parts.push(`${row.viewersDropped} viewers dropped`);
  if (row.observer.closedWith !== undefined) parts.push(`OBSERVER CLOSED ${row.observer.closedWith}`);
  return parts.join('; ');
}

interface RelayState {
  statusViewersDropped: number;
  closeCodes: Record<string, number>;
  refusals: Record<string, number>;
}

interface ProbeReport {
  tries: number;
  clientsIn: number;
  healthIn: number;
  connectP99Ms: number;
}

/** Until `until`, twice a second: a new WebSocket client (with the key) and a `GET /health`, 2 s each. */
async function probeNewcomers(until: number): Promise<ProbeReport> {
  const report: ProbeReport = { tries: 0, clientsIn: 0, healthIn: 0, connectP99Ms: 0 };
  const connectMs: number[] = [];
  while (Date.now() < until - 2_000) {
    report.tries += 1;
    const startedAt = performance.now();
    const [opened, health] = await Promise.all([
      new Promise<boolean>((resolve) => {
        const ws = new WebSocket(wsUrl(url));
        const timer = setTimeout(() => resolve(false), 2_000);
        ws.on('error', () => resolve(false));
        ws.on('unexpected-response', () => resolve(false));
        ws.on('open', () => {
          connectMs.push(performance.now() - startedAt);
          clearTimeout(timer);
          ws.close();
          resolve(true);
        });
      }),
      fetch(`${ready.url}/health`, { signal: AbortSignal.timeout(2_000) }).then(
        (response) => response.status === 200,
        () => false,
      ),
    ]);
    if (opened) report.clientsIn += 1;
    if (health) report.healthIn += 1;
    await sleep(500);
  }
  connectMs.sort((a, b) => a - b);
  report.connectP99Ms =
    connectMs[Math.min(connectMs.length - 1, Math.floor(connectMs.length * 0.99))] ?? Number.NaN;
  return report;
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
