/**
 * @module bench/attack-soak
 * `npm run soak -- --attacks [name,name]`: one row per attack of issue 32's table (docs/benchmarks.md
 * "Attacks from one address"), each against a simulator and a relay of its own, every relay option at
 * its default. A well-behaved neighbour on another loopback address (127.0.0.2: its own address
 * group, the attacker's being 127.0.0.1) watches the depth-10 books of 3 busy markets; its longest
 * wait between two book messages is measured before the attack (its baseline), during it and after
 * the attacker left, with the simulator's busiest second of requests and the relay's CPU. Verdict:
 * pass when both waits stay within max(1.5 x baseline, baseline + 1 s) and the relay's CPU under
 * 80%. `--attack-s` (20), `--after-s` (10) and `--baseline-s` (10) set the windows.
 */
import { forkChild, killAllChildren } from './lib/ipc.ts';
import { progress, sleep } from './lib/progress.ts';
import { fixed, machineInfo, markdownTable } from './lib/report.ts';
import { Neighbour } from './lib/soak/neighbour.ts';
import {
  type StreamAttackName,
  type StreamAttackReport,
  streamAttackNames,
} from './lib/soak/stream-attacks.ts';
import { type UsageSample, usageBetween } from './lib/usage.ts';

const loads: Readonly<Record<StreamAttackName, string>> = {
  'search-mirrored':
    '2 connections x 500 distinct `rest` search paths, each mirrored by the other connection',
  'activity-private': '100 connections x 200 distinct `rest` activity paths',
  'activity-shared': '100 connections x 500 `rest` activity paths, each held by two connections',
  candles: '16 connections x 100 `candles` streams',
  'rest-one-connection': '1 connection, 50 new distinct `rest` paths a second (as many as admitted)',
  'catalogue-filters': '2 connections x 60 catalogue filters (`markets` streams)',
  wildcards: '100 connections each on `"*"` for trades, market and price',
};

const NEIGHBOUR_ADDRESS = '127.0.0.2';

function option(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  const value = index < 0 ? undefined : Number(process.argv[index + 1]);
  return value !== undefined && Number.isFinite(value) && value > 0 ? value : fallback;
}

const attackSeconds = option('attack-s', 20);
const afterSeconds = option('after-s', 10);
const baselineSeconds = option('baseline-s', 10);
const listed = process.argv[process.argv.indexOf('--attacks') + 1];
const chosen =
  listed === undefined || listed.startsWith('--')
    ? [...streamAttackNames]
    : streamAttackNames.filter((name) => listed.split(',').includes(name));

interface Row {
  name: StreamAttackName;
  baselineMs: number;
  duringMs: number;
  afterMs: number;
  busiestSecond: number;
  cpuDuring: number;
  cpuAfter: number;
  peakStreams: number;
  attacker: StreamAttackReport | undefined;
  neighbourClosed: number | undefined;
}

async function run(name: StreamAttackName): Promise<Row> {
  const sim = await forkChild('sim', { env: { BENCH_SIM_MARKETS: '50', BENCH_SIM_TICK_MS: '250' } });
  const { url: simUrl, markets } = await sim.request<{ url: string; markets: string[] }>('ready');
  const relay = await forkChild('default-relay', { env: { BENCH_UPSTREAM: simUrl } });
  const attacker = await forkChild('stream-attacker');
  try {
    const { url } = await relay.request<{ url: string }>('ready');
    const neighbour = await Neighbour.connect(url, markets.slice(0, 3), NEIGHBOUR_ADDRESS);
    const readyBy = Date.now() + 20_000;
    while (!neighbour.ready && Date.now() < readyBy) await sleep(100);
    const baselineFrom = performance.now();
    await sleep(baselineSeconds * 1000);
    const attackFrom = performance.now();
    const baselineMs = neighbour.longestWait(baselineFrom, attackFrom);
    await sim.request('clearRequests');
    const before = await relay.request<UsageSample>('usage');
    await attacker.request('start', { url, spec: { name, markets } });
    let peakStreams = 0;
    const attackUntil = Date.now() + attackSeconds * 1000;
    while (Date.now() < attackUntil) {
      await sleep(1_000);
      const streams = await relay.request<number>('streams', undefined, 2_000).catch(() => 0);
      peakStreams = Math.max(peakStreams, streams);
    }
    const attackTo = performance.now();
    const during = await relay.request<UsageSample>('usage', undefined, 30_000);
    const report = await attacker.request<StreamAttackReport>('stop', undefined, 30_000);
    await sleep(afterSeconds * 1000);
    const afterTo = performance.now();
    const after = await relay.request<UsageSample>('usage', undefined, 30_000);
    const busiestSecond = await sim.request<number>('busiestSecond', undefined, 30_000);
    neighbour.close();
    return {
      name,
      baselineMs,
      duringMs: neighbour.longestWait(attackFrom, attackTo),
      afterMs: neighbour.longestWait(attackTo, afterTo),
      busiestSecond,
      cpuDuring: usageBetween(before, during).cpuShare,
      cpuAfter: usageBetween(during, after).cpuShare,
      peakStreams,
      attacker: report,
      neighbourClosed: neighbour.closedWith,
    };
  } finally {
    await attacker.stop();
    await relay.stop();
    await sim.stop();
  }
}

function verdict(row: Row): string {
  const bound = Math.max(1.5 * row.baselineMs, row.baselineMs + 1_000);
  const waits = row.duringMs <= bound && row.afterMs <= bound;
  const cpu = row.cpuDuring < 0.8 && row.cpuAfter < 0.8;
  if (waits && cpu) return 'pass';
  return `fails (${[waits ? '' : 'wait', cpu ? '' : 'CPU'].filter((part) => part !== '').join(', ')})`;
}

function attackerSummary(report: StreamAttackReport | undefined): string {
  if (report === undefined) return '';
  const errors = Object.entries(report.errors).map(([code, count]) => `${code} x${count}`);
  return [
    `${report.connections} conn (${report.refusedUpgrades} upgrades refused)`,
    `${report.requests} requests`,
    `${report.streamsWithData} streams with data`,
    ...(errors.length === 0 ? [] : [errors.join(', ')]),
  ].join('; ');
}

process.on('SIGINT', () => {
  killAllChildren();
  process.exit(130);
});
const machine = machineInfo();
progress(
  `market-relay attack soak: ${machine.nproc} cores, node ${machine.node}; baseline ${baselineSeconds} s, attack ${attackSeconds} s, after ${afterSeconds} s`,
);
const rows: Row[] = [];
for (const name of chosen) {
  progress(`${name}: ${loads[name]}`);
  rows.push(await run(name));
}
const seconds = (ms: number) => fixed(ms / 1000, 1);
process.stdout.write(
  `\n${markdownTable(
    [
      'attack (one address)',
      'neighbour baseline s',
      'longest wait during / after s',
      'upstream busiest second (req)',
      'relay CPU % during / after',
      'relay streams (peak)',
      'attacker',
      'verdict',
    ],
    rows.map((row) => [
      `${row.name}: ${loads[row.name]}`,
      seconds(row.baselineMs),
      `${seconds(row.duringMs)} / ${seconds(row.afterMs)}`,
      row.busiestSecond,
      `${fixed(row.cpuDuring * 100, 0)} / ${fixed(row.cpuAfter * 100, 0)}`,
      row.peakStreams,
      `${attackerSummary(row.attacker)}${row.neighbourClosed === undefined ? '' : `; NEIGHBOUR CLOSED ${row.neighbourClosed}`}`,
      verdict(row),
    ]),
  )}\n`,
);
process.exit(0);
