/**
 * @module bench/idle-relay
 * `node --import tsx bench/idle-relay.ts [--runs 3] [--seconds 20] [--warm-up 60]
 * [--history embedded|off] [--cli dist/src/cli.js] [--against other/dist/src/cli.js]`
 * (issue 50, "a quiet relay that costs nothing"): what a relay that is almost idle costs. One
 * `market-relay serve` (the built CLI with `npm start`'s Node flags, as an operator runs it;
 * recording into the embedded store in a fresh folder, the default, unless `--history off`) over
 * the simulator, one WebSocket client holding one depth-10 book at the default book poll (1 s).
 * `--cli` runs another build than this checkout's; `--against` a second one, measured first in
 * every run so that the two alternate (a copy of an older `dist/`, with its package.json beside
 * and node_modules reachable). Over each window after a warm-up: the relay process's CPU (ms per
 * second, from /proc/PID/stat; the main thread's alone from its schedstat), its main thread's
 * wake-ups (voluntary context switches per second, from /proc/PID/task/PID/status: each is a
 * sleep of the event loop ended by a timer or by I/O) and the messages its client received.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
function textOption(name: string, fallback: string): string {
  const index = process.argv.indexOf(`--${name}`);
  const value = index < 0 ? fallback : process.argv[index + 1];
  if (value === undefined || value.startsWith('--')) throw new Error(`--${name} takes a value`);
  return value;
}
const runs = option('runs', 3);
const seconds = option('seconds', 20);
const history = textOption('history', 'embedded');
if (history !== 'embedded' && history !== 'off') throw new Error('--history takes embedded or off');
const cli = textOption('cli', 'dist/src/cli.js');
const against = process.argv.includes('--against') ? textOption('against', '') : undefined;
/** The builds each run measures, in turn: with `--against`, that build first, then `--cli`'s. */
const builds = against === undefined ? [cli] : [against, cli];
/** `npm start`'s Node flags (package.json). */
const NODE_ARGS = ['--initial-old-space-size=128'];
/**
 * From the client's first book to the window: 60 s unless set. A fresh relay's V8 shrinks its heap
 * (42 MB after start, 27 MB live) with three full GCs, its memory reducer's, once, 20 to 60 s after
 * start, and compiles its hot code meanwhile; a window then measures that, not a relay that is idle.
 */
const warmUpMs = option('warm-up', 60) * 1000;
/** Linux's clock ticks per second, the unit of /proc/PID/stat's CPU times. */
const CLOCK_TICKS = 100;

interface Reading {
  cpuMs: number;
  /** The main thread's alone, to the nanosecond (/proc/PID/task/PID/schedstat). */
  mainCpuMs: number;
  wakes: number;
}

function read(pid: number): Reading {
  // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const cpuMs = ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  const status = readFileSync(`/proc/${pid}/task/${pid}/status`, 'utf8');
  const wakes = Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1]);
  const mainCpuMs = Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  return { cpuMs, mainCpuMs, wakes };
}

interface RunResult {
  cpuMsPerS: number;
  mainCpuMsPerS: number;
  wakesPerS: number;
  messages: number;
}

async function oneRun(upstream: string, market: string, build: string): Promise<RunResult> {
  const dataDir = mkdtempSync(join(tmpdir(), 'idle-relay-'));
  const relay: ChildRelay = await startChildRelay(
    [`--upstream=${upstream}`, `--history=${history}`, `--data-dir=${dataDir}`, '--log-level=warn'],
    { entryPoint: build, nodeArgs: NODE_ARGS },
  ).catch((error: unknown) => {
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  });
  const ws = new WebSocket(`${relay.url.replace(/^http/, 'ws')}/v1/ws`);
  let messages = 0;
  ws.on('message', () => {
    messages += 1;
  });
  try {
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    ws.send(JSON.stringify({ op: 'subscribe', id: 1, channel: 'book', markets: [market], depth: 10 }));
    await waitFor('the book snapshot', () => messages >= 2);
    await sleep(warmUpMs);
    const pid = relay.process.pid!;
    const before = read(pid);
    const countedFrom = messages;
    await sleep(seconds * 1000);
    const after = read(pid);
    return {
      cpuMsPerS: (after.cpuMs - before.cpuMs) / seconds,
      mainCpuMsPerS: (after.mainCpuMs - before.mainCpuMs) / seconds,
      wakesPerS: (after.wakes - before.wakes) / seconds,
      messages: messages - countedFrom,
    };
  } finally {
    ws.close();
    await relay.stop('SIGTERM');
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const sim = await startSim(100, 5);
try {
  const market = sim.markets[0]!;
  progress(
    `idle relay (${builds.join(' against ')}, history ${history}): ${runs} runs of ${seconds} s after ${warmUpMs / 1000} s, one client on one depth-10 book, book poll 1 s`,
  );
  console.log(
    '| run | build | relay CPU, ms per second | of it the main thread | main-thread wake-ups per second | messages to the client |',
  );
  console.log('|---|---|---|---|---|---|');
  for (let run = 1; run <= runs; run += 1) {
    for (const build of builds) {
      const result = await oneRun(sim.url, market, build);
      console.log(
        `| ${run} | ${build} | ${result.cpuMsPerS.toFixed(1)} | ${result.mainCpuMsPerS.toFixed(1)} | ${result.wakesPerS.toFixed(1)} | ${result.messages} |`,
      );
    }
  }
} finally {
  await sim.child.stop();
}
