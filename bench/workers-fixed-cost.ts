/**
 * @module bench/workers-fixed-cost
 * `node --import tsx bench/workers-fixed-cost.ts [--runs 3] [--seconds 10] [--markets 10]
 * [--clients-per-market 1] [--cli dist/src/cli.js] [--against other/dist/src/cli.js]` (issue 50,
 * "every core, by its cost"): what `--workers 2` costs over one process when the clients cost
 * almost nothing, the part of its CPU per delivery that no number of clients pays back. The
 * capacity ramp's relay (bench/scenarios/capacity-program.ts: books polled every 50 ms, markets
 * changing every 100 ms), one process and then `--workers 2`, each with a few clients on depth-10
 * books. Over each
 * window after a warm-up: every process of the relay apart (the primary, each worker, their Redis),
 * its user and system CPU from /proc, and what Redis received and sent (`INFO stats`). `--against`
 * runs an older build first in every run, so that the two alternate.
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import WebSocket from 'ws';
import { progress, sleep } from './lib/progress.ts';
import { type Simulator, startSim } from './lib/servers.ts';
import { type ProcessUsage, startRelayProgram } from './scenarios/capacity-program.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '10' },
    markets: { type: 'string', default: '10' },
    'clients-per-market': { type: 'string', default: '1' },
    cli: { type: 'string', default: 'dist/src/cli.js' },
    against: { type: 'string' },
  },
});
function count(name: keyof typeof values): number {
  const value = Number(values[name]);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`--${name} takes a positive integer`);
  return value;
}
const runs = count('runs');
const seconds = count('seconds');
const marketCount = count('markets');
const clientsPerMarket = count('clients-per-market');
const builds = [...(values.against === undefined ? [] : [values.against]), values.cli!];
const WARM_UP_MS = 6_000;
const BOOK_POLL_MS = 50;
const HEARTBEAT_MS = 5_000;

/** The private Redis of `--workers`, by the socket on its command line. */
function redisSocketOf(processes: readonly ProcessUsage[]): string | undefined {
  for (const { command } of processes) {
    const socket = /^redis-server unixsocket:(\S+)/.exec(command)?.[1];
    if (socket !== undefined) return socket;
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

async function measure(cli: string, sim: Simulator, markets: string[], workers: number): Promise<string[]> {
  const relay = await startRelayProgram({
    upstream: sim.url,
    workers,
    bookPollMs: BOOK_POLL_MS,
    heartbeatMs: HEARTBEAT_MS,
    cli: resolve(cli),
  });
  const sockets: WebSocket[] = [];
  try {
    let received = 0;
    for (const market of markets)
      for (let i = 0; i < clientsPerMarket; i += 1) {
        const ws = new WebSocket(relay.wsUrl);
        ws.on('open', () =>
          ws.send(JSON.stringify({ op: 'subscribe', channel: 'book', markets: [market], depth: 10 })),
        );
        ws.on('message', () => {
          received += 1;
        });
        sockets.push(ws);
      }
    await sleep(WARM_UP_MS);
    const before = relay.processes();
    const socket = redisSocketOf(before);
    const bytesBefore = socket === undefined ? undefined : await redisBytes(socket);
    const receivedBefore = received;
    await sleep(seconds * 1_000);
    const after = relay.processes();
    const bytesAfter = socket === undefined ? undefined : await redisBytes(socket);
    const label = `${workers === 1 ? 'one process' : `--workers ${workers}`}, ${cli}`;
    let total = 0;
    const rows: string[] = [];
    for (const now of after) {
      const then = before.find(({ pid }) => pid === now.pid);
      if (then === undefined) continue;
      const user = (now.userS - then.userS) / seconds;
      const system = (now.systemS - then.systemS) / seconds;
      total += user + system;
      const name = now.command.startsWith('redis-server') ? 'redis-server' : 'relay';
      rows.push(`| ${label} | ${name} ${now.pid} | ${user.toFixed(3)} | ${system.toFixed(3)} | | |`);
    }
    const kib = (from: number | undefined, to: number | undefined) =>
      from === undefined || to === undefined ? '-' : ((to - from) / 1024 / seconds).toFixed(0);
    rows.push(
      `| ${label} | **all** | **${total.toFixed(3)}** | | ${((received - receivedBefore) / seconds).toFixed(0)} | ${kib(bytesBefore?.in, bytesAfter?.in)} / ${kib(bytesBefore?.out, bytesAfter?.out)} |`,
    );
    return rows;
  } finally {
    for (const ws of sockets) ws.terminate();
    await relay.stop();
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
      `\nrun ${run}: ${markets.length} books polled every ${BOOK_POLL_MS} ms, ${clientsPerMarket} client(s) each, ${seconds} s\n`,
    );
    console.log('| relay | process | user (cores) | system (cores) | messages/s | Redis KiB/s in / out |');
    console.log('|---|---|---|---|---|---|');
    for (const row of rows) console.log(row);
  }
} finally {
  await sim.child.stop();
}
