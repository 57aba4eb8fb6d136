/**
 * @module bench/lib/report
 * The run's record: machine information, Markdown tables for the terminal (pasted as-is into
 * docs/benchmarks.md), and every target of issue 5 as a ratio from this run with pass/miss.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';

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
