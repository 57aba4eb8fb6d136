/**
 * @module bench/workers-fixed-cost
 * `node --import tsx bench/workers-fixed-cost.ts [--runs 3] [--seconds 10] [--markets 10]
 * [--clients-per-market 1] [--cli dist/src/cli.js] [--against other/dist/src/cli.js]` (issue 50,
 * "every core, by its cost"): what `--workers 2` costs over one process when the clients cost
 * almost nothing, the part of its CPU per delivery that no number of clients pays back. The
 * capacity ramp's relay (books polled every 50 ms, markets changing every 100 ms, `--history
 * off`), one process and then `--workers 2`, each with a few clients on depth-10 books. Over each
 * window after a warm-up: every process of the relay apart (the primary, each worker, their Redis),
 * its user and system CPU from /proc, and what Redis received and sent (`INFO stats`). `--against`
 * runs an older build first in every run, so that the two alternate.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { Redis } from 'ioredis';
import WebSocket from 'ws';
import { waitFor } from '../test/support/wait-for.ts';
import { progress, sleep } from './lib/progress.ts';
import { SHIPPED_RELAY_NODE_FLAGS, type Simulator, startSim } from './lib/servers.ts';

function option(name: string, fallback: string): string {
  const index = process.argv.indexOf(`--${name}`);
  const value = index < 0 ? fallback : process.argv[index + 1];
  if (value === undefined || value.startsWith('--')) throw new Error(`--${name} takes a value`);
  return value;
}
function count(name: string, fallback: number): number {
  const value = Number(option(name, String(fallback)));
  if (!Number.isInteger(value) || value <= 0) throw new Error(`--${name} takes a positive integer`);
  return value;
}

const runs = count('runs', 3);
const seconds = count('seconds', 10);
const marketCount = count('markets', 10);
const clientsPerMarket = count('clients-per-market', 1);
const builds = [
  ...(process.argv.includes('--against') ? [resolve(option('against', ''))] : []),
  resolve(option('cli', 'dist/src/cli.js')),
];
const WARM_UP_MS = 6_000;
/** Clock ticks per second of /proc/<pid>/stat's CPU times (USER_HZ). */
const CLOCK_TICKS = 100;

interface ProcessCpu {
  name: string;
  userS: number;
  systemS: number;
}

/** `pid` and its descendants, each with its CPU so far. */
function treeCpu(pid: number): Map<number, ProcessCpu> {
  const tree = new Map<number, ProcessCpu>();
  const visit = (id: number) => {
    try {
      const fields = readFileSync(`/proc/${id}/stat`, 'utf8').split(') ')[1]!.split(' ');
      const args = readFileSync(`/proc/${id}/cmdline`, 'utf8').split('\0');
      const name = args.some((arg) => arg.includes('redis')) ? 'redis-server' : 'relay';
      tree.set(id, {
        name,
        userS: Number(fields[11]) / CLOCK_TICKS,
        systemS: Number(fields[12]) / CLOCK_TICKS,
      });
      const children = readFileSync(`/proc/${id}/task/${id}/children`, 'utf8').trim().split(/\s+/);
      for (const child of children) if (child !== '') visit(Number(child));
    } catch {
      // Gone meanwhile: counted without it.
    }
  };
  visit(pid);
  return tree;
}

/** The private Redis of `--workers`, found by its socket on the redis-server's command line. */
function redisSocketOf(tree: Map<number, ProcessCpu>): string | undefined {
  for (const [pid, { name }] of tree) {
    if (name !== 'redis-server') continue;
    const match = /unixsocket:(\S+)/.exec(readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' '));
    if (match !== null) return match[1];
  }
  return undefined;
}

async function redisBytes(socket: string): Promise<{ in: number; out: number }> {
  const redis = new Redis({ path: socket, lazyConnect: true });
  try {
    await redis.connect();
    const stats = await redis.info('stats');
    const field = (key: string) => Number(new RegExp(`^${key}:(\\d+)`, 'm').exec(stats)?.[1] ?? Number.NaN);
    return { in: field('total_net_input_bytes'), out: field('total_net_output_bytes') };
  } finally {
    redis.disconnect();
  }
}

async function startRelay(
  cli: string,
  sim: Simulator,
  workers: number,
): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(
    process.execPath,
    [
      ...SHIPPED_RELAY_NODE_FLAGS,
      cli,
      'serve',
      '--port=0',
      `--upstream=${sim.url}`,
      `--workers=${workers}`,
      '--book-poll-ms=50',
      '--upstream-rps=5000',
      '--upstream-concurrency=32',
      '--log-level=warn',
      '--history=off',
      '--max-connections-per-address=20000',
      '--new-streams-per-second-per-address=100000',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let output = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const url = await waitFor('the relay to listen', () => /listening on (http:\/\/\S+)/.exec(output)?.[1], {
    timeoutMs: 60_000,
    everyMs: 50,
  });
  return { child, url };
}

async function measure(cli: string, sim: Simulator, markets: string[], workers: number): Promise<string[]> {
  const { child, url } = await startRelay(cli, sim, workers);
  const sockets: WebSocket[] = [];
  try {
    let received = 0;
    for (const market of markets)
      for (let i = 0; i < clientsPerMarket; i += 1) {
        const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/v1/ws`);
        ws.on('open', () =>
          ws.send(JSON.stringify({ op: 'subscribe', channel: 'book', markets: [market], depth: 10 })),
        );
        ws.on('message', () => {
          received += 1;
        });
        sockets.push(ws);
      }
    await sleep(WARM_UP_MS);
    const before = treeCpu(child.pid!);
    const socket = redisSocketOf(before);
    const bytesBefore = socket === undefined ? undefined : await redisBytes(socket);
    const receivedBefore = received;
    await sleep(seconds * 1_000);
    const after = treeCpu(child.pid!);
    const bytesAfter = socket === undefined ? undefined : await redisBytes(socket);
    const label = `${workers === 1 ? 'one process' : `--workers ${workers}`}, ${relative(process.cwd(), cli)}`;
    let total = 0;
    const rows: string[] = [];
    for (const [pid, now] of after) {
      const then = before.get(pid);
      if (then === undefined) continue;
      const user = (now.userS - then.userS) / seconds;
      const system = (now.systemS - then.systemS) / seconds;
      total += user + system;
      rows.push(`| ${label} | ${now.name} ${pid} | ${user.toFixed(3)} | ${system.toFixed(3)} | | |`);
    }
    const kib = (from: number | undefined, to: number | undefined) =>
      from === undefined || to === undefined ? '-' : ((to - from) / 1024 / seconds).toFixed(0);
    rows.push(
      `| ${label} | **all** | **${total.toFixed(3)}** | | ${((received - receivedBefore) / seconds).toFixed(0)} | ${kib(bytesBefore?.in, bytesAfter?.in)} / ${kib(bytesBefore?.out, bytesAfter?.out)} |`,
    );
    return rows;
  } finally {
    for (const ws of sockets) ws.terminate();
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    await exited;
  }
}

const sim = await startSim(100);
try {
  const markets = sim.markets.slice(0, marketCount);
  for (let run = 1; run <= runs; run += 1) {
    const rows: string[] = [];
    for (const cli of builds)
      for (const workers of [1, 2]) {
        progress(`run ${run}: ${cli}, workers ${workers}`);
        rows.push(...(await measure(cli, sim, markets, workers)));
      }
    console.log(
      `\nrun ${run}: ${markets.length} books polled every 50 ms, ${clientsPerMarket} client(s) each, ${seconds} s\n`,
    );
    console.log('| relay | process | user (cores) | system (cores) | messages/s | Redis KiB/s in / out |');
    console.log('|---|---|---|---|---|---|');
    for (const row of rows) console.log(row);
  }
} finally {
  await sim.child.stop();
}
