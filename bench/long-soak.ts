/**
 * @module bench/long-soak
 * `npm run soak -- --long [--minutes 30] [--redis]` (issue 51): hours, not minutes. One relay (with
 * `--redis`: three relays over one private redis-server, restarted once halfway) over the simulator,
 * each relay a `market-relay serve` process as an operator runs it. Throughout: markets expire and
 * appear, `--rate` (100) clients a second arrive and leave with mixed subscriptions on every channel
 * (wildcards, SSE, slow readers), a burst of upstream faults every 3 minutes, and one well-behaved
 * observer per relay. Every `--sample-s` (10) each relay is sampled from outside
 * (bench/lib/long-soak/sampler.ts); at the end the record (bench/results/<date>-long-soak*.md), its
 * plot (.svg) and samples (.json) are written and the pass criteria printed; `--report-from
 * <samples.json>` writes a past run's record and plot again; `--profile-dir <dir>` profiles the
 * relays (below).
 */
import { mkdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { resolve } from 'node:path';
import { Redis } from 'ioredis';
import { type RedisServer, startRedis } from '../test/support/cluster/redis-server.ts';
import { forkChild, killAllChildren } from './lib/ipc.ts';
import type { Point } from './lib/long-soak/analysis.ts';
import type { CrowdReport } from './lib/long-soak/clients.ts';
import { InspectorSession } from './lib/long-soak/inspector.ts';
import {
  HARNESS_NICENESS,
  type SoakProcess,
  startRelayProcess,
  startSimProcess,
  yieldToRelays,
} from './lib/long-soak/processes.ts';
import { type SoakRun, writeRecord } from './lib/long-soak/record.ts';
import {
  type RelaySample,
  type SampledRelay,
  sampleRedis,
  sampleRelay,
  stealMeter,
} from './lib/long-soak/sampler.ts';
import type { RunEvent } from './lib/long-soak/svg.ts';
import { longestLivedMarkets, MarketTurnover, setFaults } from './lib/long-soak/upstream-driver.ts';
import { progress, sleep } from './lib/progress.ts';
import { machineInfo } from './lib/report.ts';
import { Observer } from './lib/soak/observer.ts';

// `--report-from bench/results/<run>.json`: the record and plot of a past run written again.
const reportFrom = process.argv.indexOf('--report-from');
if (reportFrom >= 0) {
  // Runs saved before the rate was recorded ran at the default.
  const saved = {
    rate: 100,
    ...(JSON.parse(readFileSync(process.argv[reportFrom + 1]!, 'utf8')) as Partial<SoakRun>),
  };
  process.exit(writeRecord({ ...(saved as SoakRun), startedAt: new Date(saved.startedAt!) }) ? 0 : 1);
}

function option(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  const value = index < 0 ? fallback : Number(process.argv[index + 1]);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} takes a positive number`);
  return value;
}
const clustered = process.argv.includes('--redis');
const minutes = option('minutes', 30);
const rate = option('rate', 100);
const sampleSeconds = option('sample-s', 10);
const warmupMinutes = Math.min(5, minutes / 6);
/**
 * `--profile-dir <dir>`: each relay writes a CPU profile, its GC log and two heap snapshots there
 * (at the end of the warm-up and a minute before the end), for comparing what the heap holds by
 * constructor (bench/heap-diff.ts). The snapshots stall the relays for seconds: a profiled run's
 * event-loop figures are not the relay's.
 */
const profileAt = process.argv.indexOf('--profile-dir');
const profileDir = profileAt < 0 ? undefined : resolve(process.argv[profileAt + 1] ?? '.');
if (profileDir !== undefined) mkdirSync(profileDir, { recursive: true });
const relayCount = clustered ? 3 : 1;
const FAULT_EVERY_MS = 180_000;
const FAULT_BURST_MS = 20_000;
const REDIS_DOWN_MS = 5_000;
/** No fault burst this close to the end: the observers are judged live at the end. */
const QUIET_END_MS = Math.min(90_000, minutes * 60_000 * 0.25);

const started: {
  relays: SoakProcess[];
  sim?: SoakProcess;
  redis?: RedisServer;
  inspectors: InspectorSession[];
} = {
  relays: [],
  inspectors: [],
};
async function cleanUp(): Promise<void> {
  for (const inspector of started.inspectors) inspector.close();
  killAllChildren();
  await Promise.all(started.relays.map((relay) => relay.stop()));
  await started.sim?.stop();
  await started.redis?.stop();
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => void cleanUp().finally(() => process.exit(130)));
}

const machine = machineInfo();
const startedAt = new Date();
progress(
  `long soak${clustered ? ' (cluster: 3 relays, one Redis)' : ''}: ${minutes} min, ${rate} clients/s, sampled every ${sampleSeconds} s; ${machine.nproc} cores, node ${machine.node}, load ${os.loadavg()[0]!.toFixed(1)}`,
);
/**
 * What every relay of the soak runs with beyond its upstream: resume rings of 100 updates, so that a
 * busy stream's ring reaches its bound well within the warm-up (at the default 1,000 it keeps filling
 * for more than 17 minutes, growth the fit would take for a leak; a quiet stream's ring is bounded by
 * age, `--history-ms`, 5 minutes), and no history store (its engine's own caches are another subject;
 * the soak watches what holding clients and streams costs).
 */
const relayArgs = ['--resume-buffer=100', '--history=off'];
if (clustered) started.redis = await startRedis();
const redisPort = started.redis?.port;
const sim = await startSimProcess(['--markets=50', '--seed=1']);
started.sim = sim;
yieldToRelays(sim.pid, 'the simulator');
for (let index = 0; index < relayCount; index += 1) {
  const redisArgs = started.redis === undefined ? [] : [`--redis=${started.redis.url}`];
  started.relays.push(
    await startRelayProcess(
      `relay ${index + 1}`,
      [`--upstream=${sim.url}`, ...redisArgs, ...relayArgs],
      profileDir,
    ),
  );
}
const relays = started.relays;
const relayNames = relays.map((relay) => relay.name);
for (const relay of relays) started.inspectors.push(await InspectorSession.connect(relay.inspectorUrl!));
/** The sampler's own Redis connection (keys, memory); it reconnects by itself after the restart. */
const redisReader =
  started.redis === undefined ? undefined : new Redis(started.redis.url, { maxRetriesPerRequest: 1 });
redisReader?.on('error', () => {});

const kept = await longestLivedMarkets(sim.url, 5);
const observers = await Promise.all(relays.map((relay) => Observer.connect(relay.url, kept)));
const allLive = () =>
  observers.every(
    (observer) => observer.report().streams === kept.length * 2 && observer.report().live === kept.length * 2,
  );
for (const deadline = Date.now() + 30_000; !allLive(); await sleep(200)) {
  if (Date.now() > deadline) throw new Error('the observers were not live within 30 s');
}

const crowd = await forkChild('soak-clients');
yieldToRelays(crowd.pid, 'the crowd');
await crowd.request('start', {
  relays: relays.map((relay) => relay.url),
  simUrl: sim.url,
  rate,
  addressBlock: clustered ? 62 : 61,
  addresses: 500,
});
const turnover = new MarketTurnover({
  simUrl: sim.url,
  kept: new Set(kept),
  turnoverMs: 20_000,
  deleteAfterMs: 120_000,
});
await turnover.start();
// Each relay's event-loop histogram starts with the load (a scrape resets it).
await Promise.all(relays.map((relay) => fetch(`${relay.url}/metrics`).then((response) => response.text())));

const loadStart = Date.now();
const minuteNow = () => (Date.now() - loadStart) / 60_000;
const endAt = loadStart + minutes * 60_000;
const events: RunEvent[] = [];
const crashes: string[] = [];
if (profileDir !== undefined) {
  for (const at of [loadStart + warmupMinutes * 60_000, endAt - 60_000]) {
    setTimeout(() => {
      progress(`heap snapshots into ${profileDir}`);
      for (const relay of relays) if (relay.pid !== undefined) process.kill(relay.pid, 'SIGUSR2');
    }, at - Date.now());
  }
}

/** Fault bursts, and the cluster's Redis restart halfway: the run's schedule, beside the sampling. */
async function schedule(): Promise<void> {
  let nextBurst = loadStart + Math.min(120_000, minutes * 60_000 * 0.2);
  let redisRestart = clustered ? loadStart + (minutes * 60_000) / 2 : Number.POSITIVE_INFINITY;
  while (Date.now() < endAt - QUIET_END_MS) {
    if (Date.now() >= nextBurst) {
      const minute = minuteNow();
      progress(`fault burst: ${FAULT_BURST_MS / 1000} s`);
      await setFaults(sim.url, true);
      await sleep(FAULT_BURST_MS);
      await setFaults(sim.url, false);
      events.push({ minute, untilMinute: minuteNow(), label: 'fault burst' });
      nextBurst += FAULT_EVERY_MS;
    }
    if (Date.now() >= redisRestart && started.redis !== undefined && redisPort !== undefined) {
      const minute = minuteNow();
      progress('Redis restart');
      await started.redis.stop();
      await sleep(REDIS_DOWN_MS);
      started.redis = await startRedis(redisPort);
      events.push({ minute, untilMinute: minuteNow(), label: 'Redis restart' });
      redisRestart = Number.POSITIVE_INFINITY;
    }
    await sleep(500);
  }
}
const scheduled = schedule().catch((error: unknown) => {
  crashes.push(`schedule: ${String(error)}`);
});

const samples: RelaySample[][] = relays.map(() => []);
const sampled: SampledRelay[] = relays.map((relay, index) => ({
  url: relay.url,
  pid: relay.pid,
  inspector: started.inspectors[index]!,
}));
const load: Point[] = [];
const steal: Point[] = [];
const stealSince = stealMeter();
for (let next = loadStart + sampleSeconds * 1000; next <= endAt; next += sampleSeconds * 1000) {
  await sleep(Math.max(0, next - Date.now()));
  const minute = minuteNow();
  const redis = await Promise.race([
    sampleRedis(redisReader),
    sleep(5_000).then(() => ({ keys: Number.NaN, memoryMb: Number.NaN })),
  ]).catch(() => ({ keys: Number.NaN, memoryMb: Number.NaN }));
  load.push({ minute, value: os.loadavg()[0]! });
  steal.push({ minute, value: stealSince() });
  for (const [index, relay] of relays.entries()) {
    const crash = relay.crashed();
    if (crash !== undefined) {
      if (!crashes.some((line) => line.startsWith(relay.name))) crashes.push(`${relay.name} ${crash}`);
      continue;
    }
    try {
      samples[index]!.push(await sampleRelay(sampled[index]!, minute, redis));
    } catch (error) {
      progress(`${relay.name}: sample failed: ${String(error)}`);
    }
  }
  const last = samples.map((relaySamples) => relaySamples.at(-1));
  const passing = await crowd.request<CrowdReport>('report').catch(() => undefined);
  progress(
    `minute ${minute.toFixed(1)}: ${last
      .map(
        (sample, index) =>
          `${relayNames[index]} heap ${sample?.heapAfterGcMb.toFixed(1)} MB, rss ${sample?.rssMb.toFixed(0)} MB, fds ${sample?.fds}, conns ${sample?.connections}, loop p99 ${sample?.eventLoopP99Ms.toFixed(1)} ms, cpu ${sample?.cpuPercent.toFixed(0)} % (waiting ${sample?.cpuWaitPercent.toFixed(0)} %)`,
      )
      .join(
        '; ',
      )}${clustered ? `; redis keys ${redis.keys}` : ''}; crowd ${passing?.alive} alive, ${passing?.arrivalsPerSecond.toFixed(0)}/s; load ${os.loadavg()[0]!.toFixed(1)}, steal ${steal.at(-1)?.value.toFixed(0)} %`,
  );
}

await scheduled;
const crowdReport = await crowd.request<CrowdReport>('stop');
await crowd.stop();
await turnover.stop();
const observerEnds = observers.map((observer, index) => {
  const report = observer.report();
  observer.close();
  return {
    relay: relayNames[index]!,
    live: report.live,
    streams: report.streams,
    largestGapMs: report.largestGapMs,
    closedWith: report.closedWith,
  };
});
redisReader?.disconnect();
await cleanUp();

const run: SoakRun = {
  title: `Long soak${clustered ? ', cluster (3 relays, one Redis)' : ', one relay'}: ${minutes} min`,
  command: `npm run soak -- --long --minutes ${minutes}${clustered ? ' --redis' : ''}${rate === 100 ? '' : ` --rate ${rate}`}${profileDir === undefined ? '' : ' --profile-dir <dir>'}`,
  startedAt,
  minutes,
  rate,
  sampleSeconds,
  warmupMinutes,
  relays: relayNames,
  relayArgs,
  harnessNiceness: HARNESS_NICENESS,
  samples,
  load,
  steal,
  events,
  crowd: crowdReport,
  turnover: turnover.counts,
  observers: observerEnds,
  machine: `${machine.nproc} x ${machine.cpuModel}, ${machine.totalMemoryGb} GB, node ${machine.node}, ${machine.platform}`,
  crashes,
};
process.exit(writeRecord(run) ? 0 : 1);
