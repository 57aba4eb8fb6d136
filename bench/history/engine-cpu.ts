/**
 * @module bench/history/engine-cpu
 * The CPU time of a PostgreSQL server on this machine, from /proc: its postmaster's, its live
 * children's (a relay's connections, the writers, autovacuum), and what its children that ended
 * spent (the postmaster reaps them, so their time is in its `cutime`/`cstime`). The shared store's
 * arm reads it over its window, so that the report can say what the engine spent for the relay
 * besides what the relay spent itself. Undefined where no such server runs here (Linux only).
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

let ticksPerSecond: number | undefined;

/** CPU time (µs) of the PostgreSQL server listening on `port` here; undefined when none is found. */
export function engineCpuUs(port: number): number | undefined {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return undefined;
  }
  const postmaster = pids.find((pid) => isPostmaster(pid, port));
  if (postmaster === undefined) return undefined;
  ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
  let ticks = 0;
  const own = stat(postmaster);
  if (own === undefined) return undefined;
  ticks += own.utime + own.stime + own.cutime + own.cstime;
  for (const pid of pids) {
    const child = stat(pid);
    if (child?.ppid === Number(postmaster)) ticks += child.utime + child.stime;
  }
  return (ticks / ticksPerSecond) * 1e6;
}

function isPostmaster(pid: string, port: number): boolean {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    const at = argv.indexOf('-p');
    return argv[0]?.endsWith('/postgres') === true && at >= 0 && argv[at + 1] === String(port);
  } catch {
    return false;
  }
}

interface ProcessTimes {
  ppid: number;
  utime: number;
  stime: number;
  cutime: number;
  cstime: number;
}

/** /proc/<pid>/stat's times (clock ticks); the fields after the command's closing parenthesis. */
function stat(pid: string): ProcessTimes | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = text
      .slice(text.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number);
    // Field 3 (state) is fields[0]: ppid is field 4, utime..cstime fields 14 to 17.
    return {
      ppid: fields[1] ?? 0,
      utime: fields[11] ?? 0,
      stime: fields[12] ?? 0,
      cutime: fields[13] ?? 0,
      cstime: fields[14] ?? 0,
    };
  } catch {
    return undefined;
  }
}
