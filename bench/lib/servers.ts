/**
 * @module bench/lib/servers
 * Starting the processes of a run: the simulator, the server under test (the relay or a baseline)
 * and the load generator, each a child of its own.
 */
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ServerKind } from '../children/generator.ts';
import { type Child, forkChild } from './ipc.ts';

export interface Simulator {
  child: Child;
  url: string;
  /** Active, two-sided markets: books and prices move on every tick. */
  markets: string[];
}

/** `compressed`: the simulator answers `br` (else gzip) when the request accepts it, as a CDN does. */
export async function startSim(tickMs = 100, marketCount = 60, compressed = false): Promise<Simulator> {
  const child = await forkChild('sim', {
    env: {
      BENCH_SIM_TICK_MS: String(tickMs),
      BENCH_SIM_MARKETS: String(marketCount),
      ...(compressed ? { BENCH_SIM_COMPRESSED: '1' } : {}),
    },
  });
  const { url, markets } = await child.request<{ url: string; markets: string[] }>('ready');
  return { child, url, markets };
}

export interface ServerUnderTest {
  kind: ServerKind;
  child: Child;
  /** What the generator connects to. */
  url: string;
}

export const serverLabels: Record<ServerKind, string> = {
  relay: 'market-relay',
  ws: 'ws (idiomatic)',
  socketio: 'socket.io',
  fastify: 'fastify + @fastify/websocket (bare)',
  floor: 'floor: 1 socket write each',
  uws: 'uWebSockets.js (publish)',
};

const scripts: Record<ServerKind, string> = {
  relay: 'relay',
  ws: 'ws-baseline',
  socketio: 'socketio-baseline',
  fastify: 'fastify-baseline',
  floor: 'floor-baseline',
  uws: 'uws-baseline',
};

const profileDir = fileURLToPath(new URL('../results/profiles/', import.meta.url));

export interface ServerOptions {
  /** relay: the upstream (simulator) URL and its poll interval. */
  upstream?: string;
  pollMs?: number;
  /** relay: `--upstream-rps` (default 5,000) and `--upstream-concurrency` (default 32). */
  upstreamRps?: number;
  upstreamConcurrency?: number;
  /**
   * Node flags besides the bench's own. Unset: the relay as shipped (SHIPPED_RELAY_NODE_FLAGS), any
   * other server none; `[]` runs the relay with V8's defaults.
   */
  nodeFlags?: readonly string[];
  /** Write CPU profiles of this child to bench/results/profiles/<profileName>/ on exit. */
  cpuProf?: boolean;
  profileName?: string;
  /** relay: `--otel-endpoint` and `--otel-sample-ratio` (untraced without). */
  otel?: { endpoint: string; sampleRatio: number };
  /** relay: the store it records into (`embedded` in `dataDir`, or a store URL); nothing without. */
  history?: { store: string; dataDir: string };
  /** relay: `--coalesce-ms` (BENCH_COALESCE_MS, which every relay child reads, without). */
  coalesceMs?: number;
}

/**
 * The node flags the relay is launched with where the project launches it (package.json `start`,
 * the Dockerfile; test/docs/launch-flags.test.ts holds them together): docs/operations.md "Heap".
 */
export const SHIPPED_RELAY_NODE_FLAGS: readonly string[] = ['--initial-old-space-size=128'];

/** Node flags that write CPU profiles of a child to bench/results/profiles/<name>/ on exit. */
export function profileFlags(name: string): string[] {
  // One folder per run: the main thread and tsx's loader thread each write a profile there.
  const dir = `${profileDir}${name}`;
  mkdirSync(dir, { recursive: true });
  return ['--cpu-prof', `--cpu-prof-dir=${dir}`];
}

export async function startServer(kind: ServerKind, options: ServerOptions = {}): Promise<ServerUnderTest> {
  // The relay as an operator runs it: a lightly loaded relay with V8's default heap sizing spends a
  // fifth of its CPU at 200 clients on one book on marking (docs/operations.md "Heap").
  const nodeFlags = [
    '--expose-gc',
    ...(options.nodeFlags ?? (kind === 'relay' ? SHIPPED_RELAY_NODE_FLAGS : [])),
  ];
  if (options.cpuProf) nodeFlags.push(...profileFlags(options.profileName ?? kind));
  const env: Record<string, string> = {};
  if (options.upstream !== undefined) env.BENCH_UPSTREAM = options.upstream;
  if (options.pollMs !== undefined) env.BENCH_POLL_MS = String(options.pollMs);
  if (options.upstreamRps !== undefined) env.BENCH_UPSTREAM_RPS = String(options.upstreamRps);
  if (options.upstreamConcurrency !== undefined)
    env.BENCH_UPSTREAM_CONCURRENCY = String(options.upstreamConcurrency);
  if (options.otel !== undefined) {
    env.BENCH_OTEL_ENDPOINT = options.otel.endpoint;
    env.BENCH_OTEL_SAMPLE_RATIO = String(options.otel.sampleRatio);
  }
  if (options.history !== undefined) {
    env.BENCH_HISTORY = options.history.store;
    env.BENCH_HISTORY_DIR = options.history.dataDir;
  }
  if (options.coalesceMs !== undefined) env.BENCH_COALESCE_MS = String(options.coalesceMs);
  const child = await forkChild(scripts[kind], { nodeFlags, env });
  const { url } = await child.request<{ url: string }>('ready');
  return { kind, child, url };
}

export function startGenerator(): Promise<Child> {
  return forkChild('generator');
}
