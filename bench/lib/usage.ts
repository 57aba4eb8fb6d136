/**
 * @module bench/lib/usage
 * What a process reports about itself for a measurement window: CPU time (process.cpuUsage, the
 * figure the issue asks for), event-loop utilisation and memory. Used inside every child.
 */
import { performance } from 'node:perf_hooks';

export interface UsageSample {
  /** process.cpuUsage() user + system, microseconds. */
  cpuUs: number;
  /** The system (kernel) part of `cpuUs`: on loopback, most of a socket write's cost. */
  systemUs: number;
  /** Wall clock, milliseconds (performance.now() of the child). */
  wallMs: number;
  elu: { idle: number; active: number };
  rss: number;
  heapUsed: number;
}

export function sampleUsage(): UsageSample {
  const cpu = process.cpuUsage();
  const elu = performance.eventLoopUtilization();
  const memory = process.memoryUsage();
  return {
    cpuUs: cpu.user + cpu.system,
    systemUs: cpu.system,
    wallMs: performance.now(),
    elu: { idle: elu.idle, active: elu.active },
    rss: memory.rss,
    heapUsed: memory.heapUsed,
  };
}

export interface UsageDelta {
  cpuUs: number;
  systemUs: number;
  wallMs: number;
  /** CPU time over wall time: 1.0 = one core busy. */
  cpuShare: number;
  eventLoopUtilisation: number;
}

export function usageBetween(start: UsageSample, end: UsageSample): UsageDelta {
  const cpuUs = end.cpuUs - start.cpuUs;
  const wallMs = end.wallMs - start.wallMs;
  const active = end.elu.active - start.elu.active;
  const idle = end.elu.idle - start.elu.idle;
  return {
    cpuUs,
    systemUs: end.systemUs - start.systemUs,
    wallMs,
    cpuShare: cpuUs / 1000 / wallMs,
    eventLoopUtilisation: active / (active + idle),
  };
}

/** Memory after full garbage collections (children run with --expose-gc). */
export function memoryAfterGc(): { rss: number; heapUsed: number } {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with --expose-gc');
  for (let i = 0; i < 3; i++) gc();
  const memory = process.memoryUsage();
  return { rss: memory.rss, heapUsed: memory.heapUsed };
}
