/**
 * @module bench/lib/long-soak/sampler
 * One sample of one relay, from outside: memory after a forced GC and the active handles and
 * timers through its inspector, open file descriptors, event-loop delay p99 and the streams,
 * targets and connections it holds from its `/metrics` (prom-client's event-loop histogram is reset
 * by each scrape, so the p99 is that of the time since the scrape after the previous sample's GC),
 * and Redis's keys and memory in the cluster variant.
 */
import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';
import type { InspectorSession } from './inspector.ts';
import { metricSum } from './prometheus-text.ts';

export interface RelaySample {
  /** Minutes since the load started. */
  minute: number;
  rssMb: number;
  heapAfterGcMb: number;
  externalMb: number;
  /** Bytes the streams' resume rings hold (`market_relay_resume_buffer_bytes`): part of `externalMb`. */
  resumeBufferMb: number;
  fds: number;
  handles: number;
  timers: number;
  eventLoopP99Ms: number;
  /** The relay's CPU time over wall time since the previous sample: 100 = one core busy. */
  cpuPercent: number;
  /**
   * Time its main thread was ready to run but waited for a core (Linux schedstat), over wall time:
   * how much of its event-loop delay the machine's other work caused. NaN elsewhere.
   */
  cpuWaitPercent: number;
  streams: number;
  targets: number;
  connections: number;
  redisKeys: number;
  redisMemoryMb: number;
}

/** The figures a sample holds, in the order of the record and the plot, with their units. */
export const FIGURES = [
  ['heapAfterGcMb', 'heap used after GC', 'MB'],
  ['rssMb', 'RSS after GC', 'MB'],
  ['externalMb', 'external memory', 'MB'],
  ['resumeBufferMb', 'resume rings', 'MB'],
  ['fds', 'open file descriptors', 'count'],
  ['handles', 'active handles', 'count'],
  ['timers', 'active timers', 'count'],
  ['eventLoopP99Ms', 'event-loop delay p99', 'ms'],
  ['cpuPercent', 'relay CPU', '% of a core'],
  ['cpuWaitPercent', 'relay waiting for a core', '% of the time'],
  ['streams', 'streams held', 'count'],
  ['targets', 'poll targets held', 'count'],
  ['connections', 'connections', 'count'],
  ['redisKeys', 'Redis keys', 'count'],
  ['redisMemoryMb', 'Redis used memory', 'MB'],
] as const satisfies readonly (readonly [keyof RelaySample, string, string])[];

export type Figure = (typeof FIGURES)[number][0];

export interface SampledRelay {
  /** The relay's HTTP base URL (its `/metrics`). */
  url: string;
  inspector: InspectorSession;
  /** Its process id, for its run-queue wait (Linux). */
  pid?: number;
  /** Its CPU seconds, run-queue wait (ns) and wall clock (ms) at the previous sample; set by `sampleRelay`. */
  previousCpu?: { seconds: number; waitNs: number; atMs: number };
}

/** Nanoseconds the process's main thread has waited on a run queue (`/proc/PID/schedstat`, field 2). */
function runQueueWaitNs(pid: number | undefined): number {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[1]);
  } catch {
    return Number.NaN;
  }
}

/** CPU time of the whole machine, in USER_HZ ticks: all of it, and what the hypervisor took (Linux). */
interface MachineTicks {
  total: number;
  steal: number;
}

function machineTicks(): MachineTicks | undefined {
  try {
    // "cpu  user nice system idle iowait irq softirq steal guest guest_nice"
    const fields = readFileSync('/proc/stat', 'utf8')
      .split('\n', 1)[0]!
      .trim()
      .split(/\s+/)
      .slice(1, 9)
      .map(Number);
    return { total: fields.reduce((sum, ticks) => sum + ticks, 0), steal: fields[7] ?? Number.NaN };
  } catch {
    return undefined;
  }
}

/**
 * The share of the machine's CPU time the hypervisor gave to others (steal) since the previous
 * call, in %: a virtual machine's cores can be taken away with none of its processes waiting on a
 * run queue, which stalls an event loop as a busy core does. NaN off Linux, or when the machine's
 * CPU time has not moved by a tick since the previous call.
 */
export function stealMeter(): () => number {
  let previous = machineTicks();
  return () => {
    const now = machineTicks();
    const before = previous;
    previous = now;
    if (now === undefined || before === undefined || now.total <= before.total) return Number.NaN;
    return ((now.steal - before.steal) / (now.total - before.total)) * 100;
  };
}

const MB = 2 ** 20;

/** Redis's keys and used memory; NaN-free zeros without Redis. */
export async function sampleRedis(redis: Redis | undefined): Promise<{ keys: number; memoryMb: number }> {
  if (redis === undefined) return { keys: 0, memoryMb: 0 };
  const [keys, info] = await Promise.all([redis.dbsize(), redis.info('memory')]);
  const usedMemory = Number(/^used_memory:(\d+)/m.exec(info)?.[1] ?? Number.NaN);
  return { keys, memoryMb: usedMemory / MB };
}

async function scrape(url: string): Promise<string> {
  return (await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(10_000) })).text();
}

export async function sampleRelay(
  relay: SampledRelay,
  minute: number,
  redis: { keys: number; memoryMb: number },
): Promise<RelaySample> {
  // The scrape first, then the forced GC, then a scrape whose figures are dropped: each scrape resets
  // the event-loop histogram, so the pause of the GC the soak itself forces (tens of ms for a heap of
  // 60 MB) is in no sample's window and the p99 is the relay's own.
  const metrics = await scrape(relay.url);
  const atMs = Date.now();
  const insides = await relay.inspector.insidesAfterGc();
  await scrape(relay.url);
  const cpuSeconds = metricSum(metrics, 'market_relay_process_cpu_seconds_total');
  const waitNs = runQueueWaitNs(relay.pid);
  const previous = relay.previousCpu;
  relay.previousCpu = { seconds: cpuSeconds, waitNs, atMs };
  return {
    minute,
    rssMb: insides.rss / MB,
    heapAfterGcMb: insides.heapUsed / MB,
    externalMb: insides.external / MB,
    resumeBufferMb: metricSum(metrics, 'market_relay_resume_buffer_bytes') / MB,
    fds: metricSum(metrics, 'market_relay_process_open_fds'),
    handles: insides.handles,
    timers: insides.timers,
    // The delay itself (src/observability/event-loop-delay.ts): an idle loop reads about 0.
    eventLoopP99Ms: metricSum(metrics, 'market_relay_nodejs_eventloop_lag_p99_seconds') * 1000,
    cpuPercent:
      previous === undefined
        ? Number.NaN
        : ((cpuSeconds - previous.seconds) / ((atMs - previous.atMs) / 1000)) * 100,
    cpuWaitPercent:
      previous === undefined ? Number.NaN : ((waitNs - previous.waitNs) / 1e6 / (atMs - previous.atMs)) * 100,
    streams: metricSum(metrics, 'market_relay_streams'),
    targets: metricSum(metrics, 'market_relay_polled_markets'),
    connections: metricSum(metrics, 'market_relay_connections'),
    redisKeys: redis.keys,
    redisMemoryMb: redis.memoryMb,
  };
}
