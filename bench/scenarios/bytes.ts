/**
 * @module bench/scenarios/bytes
 * Scenario 6: bytes on the wire per client per minute with updates (what the relay sends) against
 * full snapshots at every change (a relay that did not diff) and against polling upstream's raw
 * order book (the status quo). Clients hold one stream each: book depth 10, full book, or price.
 * Each client re-subscribes every few seconds to sample the current snapshot size (a repeated
 * subscribe answers with a fresh snapshot, protocol.md).
 */
import type { GroupCounts } from '../children/generator.ts';
import type { BenchOptions } from '../lib/options.ts';
import { progress, sleep } from '../lib/progress.ts';
import { type Simulator, startGenerator, startServer, startSim } from '../lib/servers.ts';
import { FANOUT_MARKETS } from './fanout.ts';

/** The relay's default `--book-poll-ms` / `--price-poll-ms`. */
const BYTES_POLL_MS = 1_000;
const RESUBSCRIBE_MS = 5_000;

export interface BytesRun {
  stream: string;
  updatesPerMin: number;
  /** Per client per minute, payload plus WebSocket frame header. */
  updateBytesPerMin: number;
  meanUpdateBytes: number;
  meanSnapshotBytes: number;
  snapshotBytesPerMin: number;
  /** Snapshots over updates. */
  saving: number;
}

export interface BytesResult {
  pollMs: number;
  simTickMs: number;
  windowS: number;
  runs: BytesRun[];
  /** The status quo: a client polling upstream's order book itself, per market per minute. */
  upstreamBookBytes: number;
  upstreamPollingBytesPerMin: number;
}

function wsHeader(length: number): number {
  return length < 126 ? 2 : length < 65_536 ? 4 : 10;
}

/** The simulator's default tick: a few order-flow steps per poll, rather than the ten of the busy runs. */
const BYTES_SIM_TICK_MS = 250;

export async function runBytes(options: BenchOptions): Promise<BytesResult> {
  const sim = await startSim(BYTES_SIM_TICK_MS);
  try {
    return await measureBytes(options, sim);
  } finally {
    await sim.child.stop();
  }
}

async function measureBytes(options: BenchOptions, sim: Simulator): Promise<BytesResult> {
  const markets = sim.markets.slice(0, FANOUT_MARKETS);
  let upstreamBytes = 0;
  for (const market of markets) {
    const response = await fetch(`${sim.url}/clob/orderbook?market_id=${market}`);
    upstreamBytes += (await response.arrayBuffer()).byteLength;
  }
  const upstreamBookBytes = upstreamBytes / markets.length;

  const windowMs = options.quick ? 10_000 : 30_000;
  progress(
    `bytes: book depth 10, full book and price streams over ${windowMs / 1000} s, poll ${BYTES_POLL_MS} ms`,
  );
  const server = await startServer('relay', { upstream: sim.url, pollMs: BYTES_POLL_MS });
  const generator = await startGenerator();
  try {
    const groups = [
      {
        label: 'book, depth 10',
        count: markets.length,
        channel: 'book',
        depth: 10,
        assign: 'one-each',
        markets,
      },
      {
        label: 'book, full depth',
        count: markets.length,
        channel: 'book',
        depth: null,
        assign: 'one-each',
        markets,
      },
      { label: 'price', count: markets.length, channel: 'price', assign: 'one-each', markets },
    ];
    await generator.request('connect', { kind: 'relay', url: server.url, groups });
    await generator.request('awaitFirst', { timeoutMs: 30_000 }, 60_000);
    await generator.request('reset');
    const started = Date.now();
    while (Date.now() - started < windowMs) {
      await sleep(Math.min(RESUBSCRIBE_MS, windowMs - (Date.now() - started)));
      for (const group of groups) await generator.request('resubscribe', { label: group.label });
    }
    const minutes = (Date.now() - started) / 60_000;
    const stats = await generator.request<{ groups: Record<string, GroupCounts> }>('stats');
    const runs: BytesRun[] = [];
    for (const [label, counts] of Object.entries(stats.groups)) {
      const updatesPerMin = counts.updates / counts.clients / minutes;
      const meanSnapshot = counts.snapshots > 0 ? counts.snapshotBytes / counts.snapshots : 0;
      const updateBytesPerMin = counts.updateWireBytes / counts.clients / minutes;
      const snapshotBytesPerMin = (meanSnapshot + wsHeader(meanSnapshot)) * updatesPerMin;
      runs.push({
        stream: label,
        updatesPerMin,
        updateBytesPerMin,
        meanUpdateBytes: counts.updates > 0 ? counts.updateBytes / counts.updates : 0,
        meanSnapshotBytes: meanSnapshot,
        snapshotBytesPerMin,
        saving: snapshotBytesPerMin / updateBytesPerMin,
      });
    }
    return {
      pollMs: BYTES_POLL_MS,
      simTickMs: BYTES_SIM_TICK_MS,
      windowS: minutes * 60,
      runs,
      upstreamBookBytes,
      upstreamPollingBytesPerMin: (upstreamBookBytes * 60_000) / BYTES_POLL_MS,
    };
  } finally {
    await generator.stop();
    await server.child.stop();
  }
}
