/**
 * @module bench/idle-relay
 * `node --import tsx bench/idle-relay.ts [--runs 3] [--seconds 20]` (issue 50, "a quiet relay that
 * costs nothing"): what a relay that is almost idle costs. One `market-relay serve` (the built CLI,
 * as an operator runs it, no history) over the simulator, one WebSocket client holding one depth-10
 * book at the default book poll (1 s). Over each window after a warm-up: the relay process's CPU
 * (ms per second, from /proc/PID/stat), its main thread's wake-ups (voluntary context switches per
 * second, from /proc/PID/task/PID/status: each is a sleep of the event loop ended by a timer or by
 * I/O) and the messages its client received. To compare two builds, run it from each checkout in
 * turn, alternating (bench/README.md).
 */
import { readFileSync } from 'node:fs';
import WebSocket from 'ws';
import { type ChildRelay, startChildRelay } from '../test/support/cluster/child-relay.ts';
import { waitFor } from '../test/support/wait-for.ts';
import { progress, sleep } from './lib/progress.ts';
import { startSim } from './lib/servers.ts';

function option(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  const value = index < 0 ? fallback : Number(process.argv[index + 1]);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} takes a positive number`);
  return value;
}
const runs = option('runs', 3);
const seconds = option('seconds', 20);
const WARM_UP_MS = 5_000;
/** Linux's clock ticks per second, the unit of /proc/PID/stat's CPU times. */
const CLOCK_TICKS = 100;

interface Reading {
  cpuMs: number;
  wakes: number;
}

function read(pid: number): Reading {
  // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const cpuMs = ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  const status = readFileSync(`/proc/${pid}/task/${pid}/status`, 'utf8');
  const wakes = Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1]);
  return { cpuMs, wakes };
}

async function oneRun(
  upstream: string,
  market: string,
): Promise<{ cpuMsPerS: number; wakesPerS: number; messages: number }> {
  const relay: ChildRelay = await startChildRelay([
    `--upstream=${upstream}`,
    '--history=off',
    '--log-level=warn',
  ]);
  const ws = new WebSocket(`${relay.url.replace(/^http/, 'ws')}/v1/ws`);
  let messages = 0;
  ws.on('message', () => {
    messages += 1;
  });
  try {
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    ws.send(JSON.stringify({ op: 'subscribe', id: 1, channel: 'book', markets: [market], depth: 10 }));
    await waitFor('the book snapshot', () => messages >= 2);
    await sleep(WARM_UP_MS);
    const pid = relay.process.pid!;
    const before = read(pid);
    const countedFrom = messages;
    await sleep(seconds * 1000);
    const after = read(pid);
    return {
      cpuMsPerS: (after.cpuMs - before.cpuMs) / seconds,
      wakesPerS: (after.wakes - before.wakes) / seconds,
      messages: messages - countedFrom,
    };
  } finally {
    ws.close();
    await relay.stop('SIGTERM');
  }
}

const sim = await startSim(100, 5);
try {
  const market = sim.markets[0]!;
  progress(`idle relay: ${runs} runs of ${seconds} s, one client on one depth-10 book, book poll 1 s`);
  console.log(
    '| run | relay CPU, ms per second | main-thread wake-ups per second | messages to the client |',
  );
  console.log('|---|---|---|---|');
  for (let run = 1; run <= runs; run += 1) {
    const result = await oneRun(sim.url, market);
    console.log(
      `| ${run} | ${result.cpuMsPerS.toFixed(1)} | ${result.wakesPerS.toFixed(1)} | ${result.messages} |`,
    );
  }
} finally {
  await sim.child.stop();
}
