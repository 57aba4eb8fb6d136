/**
 * @module bench/scenarios/capacity-program
 * The capacity scenario's relay: `market-relay serve` as an operator starts it (one process, or
 * `--workers N` with the redis-server its primary starts), with the connection limits raised for
 * one load generator address. Its CPU time and resident size are read from /proc for the whole
 * process tree (primary, workers, their Redis), so one process and N workers are measured alike.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { sleep } from '../lib/progress.ts';
import { profileFlags, SHIPPED_RELAY_NODE_FLAGS } from '../lib/servers.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Clock ticks per second of /proc/<pid>/stat's CPU times (USER_HZ, 100 on Linux). */
const CLOCK_TICKS = 100;
const PAGE_BYTES = 4096;

export interface RelayProgramOptions {
  upstream: string;
  workers: number;
  bookPollMs: number;
  heartbeatMs: number;
  /** `--cpu-prof`: every process of the relay (its workers too) writes a profile under this name. */
  profileName?: string;
  /** The built CLI to start (another build's, to compare); this checkout's `dist/src/cli.js` unless given. */
  cli?: string;
}

export interface RelayProgram {
  /** ws://host:port/v1/ws */
  wsUrl: string;
  /** Resident bytes and CPU seconds of every process of the relay together, now. */
  usage(): TreeUsage;
  /** Each process of the relay apart (primary, workers, their Redis), now. */
  processes(): ProcessUsage[];
  stop(): Promise<void>;
}

export interface ProcessUsage {
  pid: number;
  /** Its command line, arguments separated by spaces. */
  command: string;
  userS: number;
  systemS: number;
  rssBytes: number;
}

export interface TreeUsage {
  at: number;
  processes: number;
  rssBytes: number;
  cpuS: number;
}

/** Every limit that would refuse one generator address's thousands of connections, raised. */
const ONE_ADDRESS_LIMITS = [
  '--max-connections=20000',
  '--max-connections-per-address=20000',
  '--connection-rate-per-address=1000000',
  '--connection-burst-per-address=1000000',
  '--max-pending-connections=20000',
  '--max-pending-per-address=20000',
  '--new-streams-per-second-per-address=100000',
  '--client-rps=1000',
  '--client-burst=1000',
];

export async function startRelayProgram(options: RelayProgramOptions): Promise<RelayProgram> {
  const child: ChildProcess = spawn(
    process.execPath,
    [
      ...SHIPPED_RELAY_NODE_FLAGS,
      // Workers inherit the primary's node flags, so each writes its own profile beside it.
      ...(options.profileName === undefined ? [] : profileFlags(options.profileName)),
      options.cli ?? 'dist/src/cli.js',
      'serve',
      '--port=0',
      `--upstream=${options.upstream}`,
      `--workers=${options.workers}`,
      `--book-poll-ms=${options.bookPollMs}`,
      '--price-poll-ms=1000',
      '--upstream-rps=5000',
      '--upstream-concurrency=32',
      `--heartbeat-ms=${options.heartbeatMs}`,
      '--log-level=warn',
      // The record's own cost is to be measured apart (issue 47); these baselines stay comparable.
      '--history=off',
      ...ONE_ADDRESS_LIMITS,
    ],
    { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let output = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const deadline = Date.now() + 60_000;
  let url: string | undefined;
  while (url === undefined) {
    if (child.exitCode !== null) throw new Error(`relay exited: ${output.slice(-500)}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`relay did not listen within 60 s: ${output.slice(-500)}`);
    }
    url = /market-relay listening on (http:\/\/\S+)/.exec(output)?.[1];
    if (url === undefined) await sleep(50);
  }
  const pid = child.pid!;
  return {
    wsUrl: `${url.replace(/^http/, 'ws')}/v1/ws`,
    usage: () => treeUsage(pid),
    processes: () => descendants(pid).flatMap((id) => processUsage(id) ?? []),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** `pid` and its descendants: /proc/<pid>/task/<pid>/children, recursively. */
function descendants(pid: number): number[] {
  let children: number[] = [];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter((text) => text !== '')
      .map(Number);
  } catch {
    // Gone, or no such file on this kernel: counted without its children.
  }
  return [pid, ...children.flatMap(descendants)];
}

function treeUsage(root: number): TreeUsage {
  const each = descendants(root).flatMap((pid) => processUsage(pid) ?? []);
  return {
    at: Date.now(),
    processes: each.length,
    rssBytes: each.reduce((sum, process) => sum + process.rssBytes, 0),
    cpuS: each.reduce((sum, process) => sum + process.userS + process.systemS, 0),
  };
}

/** Undefined when it exited between the listing and the read. */
function processUsage(pid: number): ProcessUsage | undefined {
  try {
    // Fields after the command (which may hold spaces) start after its closing parenthesis.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const pages = Number(readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ')[1]);
    return {
      pid,
      command: readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim(),
      // utime and stime are fields 14 and 15 of stat, 12 and 13 of what follows the command.
      userS: Number(fields[11]) / CLOCK_TICKS,
      systemS: Number(fields[12]) / CLOCK_TICKS,
      rssBytes: pages * PAGE_BYTES,
    };
  } catch {
    return undefined;
  }
}

/** CPU share (1 = one core) between two samples. */
export function cpuShareBetween(start: TreeUsage, end: TreeUsage): number {
  return (end.cpuS - start.cpuS) / Math.max(0.001, (end.at - start.at) / 1000);
}
