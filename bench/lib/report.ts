/**
 * @module bench/lib/report
 * The run's record: machine information, Markdown tables for the terminal (pasted as-is into
 * docs/benchmarks.md), and every target of issue 5 as a ratio from this run with pass/miss.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import type { RunMetrics } from './broadcast-run.ts';
import type { SdkCheckResult } from './sdk-check.ts';

export interface MachineInfo {
  nproc: number;
  cpuModel: string;
  node: string;
  platform: string;
  totalMemoryGb: number;
  openFilesLimit: string;
}

export function machineInfo(): MachineInfo {
  let cpuModel = os.cpus()[0]?.model ?? 'unknown';
  try {
    const line = readFileSync('/proc/cpuinfo', 'utf8')
      .split('\n')
      .find((text) => text.startsWith('model name'));
    if (line !== undefined) cpuModel = line.split(':')[1]?.trim() ?? cpuModel;
  } catch {
    // Not Linux: os.cpus() is the best there is.
  }
  let openFilesLimit = 'unknown';
  try {
    openFilesLimit = execFileSync('sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).trim();
  } catch {
    // No shell: leave it unknown.
  }
  return {
    nproc: os.availableParallelism(),
    cpuModel,
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
    totalMemoryGb: Math.round(os.totalmem() / 1024 ** 3),
    openFilesLimit,
  };
}

export interface Target {
  name: string;
  /** The measured ratio or value. */
  value: number;
  /** At most this. */
  limit: number;
  unit: string;
  met: boolean;
}

/** One scenario's part of the printed report: its Markdown section and the targets it measured. */
export interface Report {
  section: string;
  targets: Target[];
}

export function target(name: string, value: number, limit: number, unit = 'x'): Target {
  return { name, value, limit, unit, met: value <= limit };
}

/** A Markdown table (aligned, so it also reads well in a terminal). */
export function markdownTable(headers: string[], rows: (string | number)[][]): string {
  const cells = rows.map((row) => row.map(String));
  const widths = headers.map((header, i) =>
    Math.max(header.length, ...cells.map((row) => row[i]?.length ?? 0)),
  );
  const line = (row: string[]): string => `| ${row.map((cell, i) => cell.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(headers), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...cells.map(line)].join(
    '\n',
  );
}

export function fixed(value: number, digits = 1): string {
  return Number.isFinite(value) ? value.toFixed(digits) : 'n/a';
}

/** The columns of a broadcast run's row (fan-out, many markets). */
export const runHeaders = [
  'server',
  'clients',
  'deliveries/s',
  'frame B',
  'CPU µs/delivery',
  'server CPU %',
  'p50 ms',
  'p99 ms',
  'max ms',
  'generator CPU %',
  'sent % of asked',
];

export const runRow = (run: RunMetrics): (string | number)[] => [
  run.server,
  run.connected,
  fixed(run.deliveriesPerSec, 0),
  fixed(run.meanFrameBytes, 0),
  fixed(run.cpuPerDeliveryUs, 2),
  fixed(run.serverCpuShare * 100, 1),
  fixed(run.latency.p50Ms, 1),
  fixed(run.latency.p99Ms, 1),
  fixed(run.latency.maxMs, 1),
  fixed(run.generatorCpuShare * 100, 1),
  run.pacing === undefined ? '' : fixed(sentShare(run.pacing) * 100, 1),
];

/** A baseline whose window sent more than this away from its plan did not carry the relay's load. */
const PACING_TOLERANCE = 0.03;

function sentShare(pacing: { sent: number; asked: number }): number {
  return pacing.sent / Math.max(1, pacing.asked);
}

/**
 * A warning for every baseline of `runs` whose window sent less than 97% of the messages its plan
 * asked for (it fell over a cycle behind: a lighter load than the relay's, which flatters its CPU
 * per delivery) or more than 103% (it was catching up on a backlog from before the window); empty
 * when none did.
 */
export function pacingLine(runs: readonly RunMetrics[]): string {
  let text = '';
  for (const { server, pacing } of runs) {
    if (pacing === undefined) continue;
    const share = sentShare(pacing);
    if (Math.abs(share - 1) <= PACING_TOLERANCE) continue;
    const [label, reason] =
      share < 1
        ? ['SHORT', 'it carried a lighter load than the relay']
        : ['OVER', 'it was catching up on messages owed before the window'];
    text +=
      `${label}: ${server} sent ${pacing.sent} of the ${pacing.asked} messages its plan asked for in the window ` +
      `(${fixed(share * 100, 1)}%): ${reason}; re-run on a quieter machine\n`;
  }
  return text;
}

export function writesLine(framesPerWrite: number | undefined): string {
  if (framesPerWrite === undefined) return '';
  return `relay frames per socket write (coalescing): ${fixed(framesPerWrite, 2)}\n`;
}

/** The client SDK subscriber that rode along the relay run: books kept, seq and checksums verified. */
export function sdkLine(sdk: SdkCheckResult | undefined): string {
  if (sdk === undefined) return '';
  return `client SDK alongside (market-relay/client, ${sdk.streams} books verified by seq and checksum): ${sdk.updates} updates, ${sdk.resyncs} resyncs\n`;
}
