/**
 * @module bench/walk-coverage
 * `npm run build && node --import tsx bench/walk-coverage.ts [--runs 3] [--seconds 8] [--functions]` (issue 46,
 * "the walk measured"): in how many of the project's source files, and in how many folders, code
 * runs while one JSON client holds one depth-10 book, and how many of them run with no client at all.
 *
 * One `market-relay serve` (the built CLI, `dist/src/cli.js`, as an operator runs it; no history,
 * default poll intervals) over the simulator in a child of its own, started with `--inspect` on a
 * free port. Over that inspector: `Profiler.startPreciseCoverage({callCount: true, detailed: true})`;
 * after a second, the counters are reset (a `takePreciseCoverage` thrown away) and, `--seconds` later,
 * taken: the files that ran with no client. Then one WebSocket client subscribes to one market's
 * depth-10 book (JSON frames); once it has the snapshot and one update the counters are reset again
 * and, `--seconds` later, taken: the files that ran for it. A file counts when a function of it was
 * called in the window (the table's last column but one also counts a file where only a block ran:
 * an async function resumed after an `await`, which is no call); a compiled file is named by its source
 * (src/, packages/<name>/src/) through its source map. Prints both lists, each file's folder and
 * the counts, per run; with `--functions`, every function called with the client and its calls (the
 * ones called once per poll or per message are the walk). docs/architecture.md holds the latest figures.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { relayEntryPoint } from '../test/support/cluster/child-relay.ts';
import { waitFor } from '../test/support/wait-for.ts';
import { progress, sleep } from './lib/progress.ts';
import { startSim } from './lib/servers.ts';
import {
  called,
  callsByFunction,
  entered,
  filesThatRan,
  foldersOf,
  projectSourceOf,
  type ScriptCoverage,
  type SourceMapFields,
} from './lib/walk-files.ts';

function option(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  const value = index < 0 ? fallback : Number(process.argv[index + 1]);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`--${name} takes a positive integer`);
  return value;
}
const runs = option('runs', 3);
const seconds = option('seconds', 8);
/** `--functions`: also print every function called with the client, with its calls. */
const listFunctions = process.argv.includes('--functions');
/** After the relay listens, before the no-client window: what starting left pending settles. */
const SETTLE_MS = 1_000;

const root = fileURLToPath(new URL('..', import.meta.url));
if (relayEntryPoint() !== 'dist/src/cli.js') {
  throw new Error('dist/ is missing or older than the sources: run `npm run build` first');
}

function readMap(file: string): SourceMapFields | undefined {
  const mapFile = `${file}.map`;
  return existsSync(mapFile) ? (JSON.parse(readFileSync(mapFile, 'utf8')) as SourceMapFields) : undefined;
}
const sourceOf = (url: string) => projectSourceOf(root, url, readMap);

/** The relay's inspector: Chrome DevTools Protocol requests over its WebSocket, one reply each. */
class Inspector {
  private nextId = 1;
  private readonly pending = new Map<number, (reply: { result?: unknown; error?: unknown }) => void>();

  private constructor(private readonly socket: WebSocket) {
    socket.on('message', (data) => {
      const reply = JSON.parse(String(data)) as { id?: number; result?: unknown; error?: unknown };
      if (reply.id === undefined) return;
      this.pending.get(reply.id)?.(reply);
      this.pending.delete(reply.id);
    });
    // A relay that exits mid-run fails the request waiting on it, rather than leaving it unanswered.
    socket.on('close', () => {
      for (const reply of this.pending.values()) reply({ error: 'the inspector closed' });
      this.pending.clear();
    });
  }

  static async connect(url: string): Promise<Inspector> {
    const socket = new WebSocket(url);
    await once(socket, 'open');
    return new Inspector(socket);
  }

  async send<T>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    const id = this.nextId++;
    this.socket.send(JSON.stringify({ id, method, params }));
    const reply = await new Promise<{ result?: unknown; error?: unknown }>((resolve) =>
      this.pending.set(id, resolve),
    );
    if (reply.error !== undefined) throw new Error(`${method}: ${JSON.stringify(reply.error)}`);
    return reply.result as T;
  }

  /** The files that ran since the last take (which resets the counters). */
  async take(): Promise<Window> {
    const { result } = await this.send<{ result: ScriptCoverage[] }>('Profiler.takePreciseCoverage');
    return {
      called: filesThatRan(result, sourceOf, called),
      entered: filesThatRan(result, sourceOf, entered),
      calls: callsByFunction(result, sourceOf),
    };
  }

  close(): void {
    this.socket.close();
  }
}

interface Relay {
  process: ChildProcess;
  url: string;
  inspectorUrl: string;
}

async function startRelay(upstream: string): Promise<Relay> {
  const child = spawn(
    process.execPath,
    [
      '--inspect=127.0.0.1:0',
      'dist/src/cli.js',
      'serve',
      '--port=0',
      `--upstream=${upstream}`,
      '--history=off',
      '--log-level=warn',
    ],
    { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  try {
    return await waitFor(
      'the relay to listen and its inspector',
      () => {
        if (child.exitCode !== null) throw new Error(`the relay exited: ${output.slice(-500)}`);
        const relayUrl = /market-relay listening on (http:\/\/\S+)/.exec(output)?.[1];
        const inspector = /Debugger listening on (ws:\/\/\S+)/.exec(output)?.[1];
        return relayUrl !== undefined && inspector !== undefined
          ? { process: child, url: relayUrl, inspectorUrl: inspector }
          : undefined;
      },
      { timeoutMs: 20_000, everyMs: 20 },
    );
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
}

/** A window's files: where a function was called, and where any code ran (calls or resumed blocks). */
interface Window {
  called: string[];
  entered: string[];
  /** Each called function (`file:name`) with its calls, most called first. */
  calls: { fn: string; calls: number }[];
}

interface RunResult {
  idle: Window;
  withClient: Window;
  messages: number;
}

async function oneRun(upstream: string, market: string): Promise<RunResult> {
  const relay = await startRelay(upstream);
  const inspector = await Inspector.connect(relay.inspectorUrl);
  let client: WebSocket | undefined;
  try {
    await inspector.send('Profiler.enable');
    await inspector.send('Profiler.startPreciseCoverage', { callCount: true, detailed: true });
    await sleep(SETTLE_MS);
    await inspector.take();
    await sleep(seconds * 1000);
    const idle = await inspector.take();

    const ws = new WebSocket(`${relay.url.replace(/^http/, 'ws')}/v1/ws`);
    client = ws;
    const kinds: string[] = [];
    ws.on('message', (data) => kinds.push((JSON.parse(String(data)) as { type: string }).type));
    await once(ws, 'open');
    ws.send(JSON.stringify({ op: 'subscribe', id: 1, channel: 'book', markets: [market], depth: 10 }));
    await waitFor(
      'the snapshot and one update',
      () => kinds.includes('snapshot') && kinds.includes('update'),
      {
        timeoutMs: 20_000,
      },
    );
    await inspector.take();
    const countedFrom = kinds.length;
    await sleep(seconds * 1000);
    const withClient = await inspector.take();
    return { idle, withClient, messages: kinds.length - countedFrom };
  } finally {
    client?.close();
    inspector.close();
    const exited = once(relay.process, 'exit');
    relay.process.kill('SIGTERM');
    await exited;
  }
}

function print(title: string, window: Window): void {
  const folders = foldersOf(window.called);
  console.log(`${title}: a function called in ${window.called.length} files in ${folders.size} folders`);
  for (const [folder, count] of folders) {
    const names = window.called
      .filter((file) => file.startsWith(`${folder}/`) && !file.slice(folder.length + 1).includes('/'))
      .map((file) => file.slice(folder.length + 1));
    console.log(`  ${folder}/ (${count}): ${names.join(' ')}`);
  }
  const resumedOnly = window.entered.filter((file) => !window.called.includes(file));
  console.log(`  code ran without a call (a resumed async function) in: ${resumedOnly.join(' ') || 'none'}`);
}

const sim = await startSim(100, 5);
try {
  const market = sim.markets[0];
  if (market === undefined) throw new Error('the simulator has no busy market');
  progress(`walk coverage: ${runs} runs of ${seconds} s windows, one JSON client on one depth-10 book`);
  const summary: string[] = [];
  for (let run = 1; run <= runs; run += 1) {
    const result = await oneRun(sim.url, market);
    console.log(`\nrun ${run} (${result.messages} messages to the client in the window)`);
    print('no client', result.idle);
    print('one client, one depth-10 book', result.withClient);
    if (listFunctions)
      for (const { fn, calls } of result.withClient.calls)
        console.log(`    ${String(calls).padStart(6)} ${fn}`);
    const { called: withClient, entered: ranWithClient } = result.withClient;
    const { called: idle } = result.idle;
    const added = withClient.filter((file) => !idle.includes(file));
    summary.push(
      `| ${run} | ${withClient.length} | ${foldersOf(withClient).size} | ${idle.length} | ${foldersOf(idle).size} | ${added.length} | ${ranWithClient.length} | ${result.messages} |`,
    );
  }
  console.log(
    '\n| run | files, one client | folders, one client | files, no client | folders, no client | files only with the client | files where any code ran, one client | messages in the window |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  for (const line of summary) console.log(line);
} finally {
  await sim.child.stop();
}
