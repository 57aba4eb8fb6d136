/**
 * @module bench/scenarios/memory
 * Scenario 3: RSS and heap per idle subscribed connection, relay against bare `ws` (and socket.io),
 * at 10k connections. Books are frozen in the simulator so that subscribed connections stay idle
 * after their snapshot; baselines send each client one frame of the relay's snapshot size, so every
 * server has written the same bytes. Memory is read after forced full GCs (children run with
 * --expose-gc), before connecting and after every client got its first frame. A second relay row
 * has every client negotiate permessage-deflate and compress its requests, as browsers do (each
 * costs the relay an inflate context). A last row, bare sockets on fastify + @fastify/websocket,
 * shows what the relay's HTTP stack alone costs.
 */
import type { GroupCounts, ServerKind } from '../children/generator.ts';
import type { BenchOptions } from '../lib/options.ts';
import { progress, sleep } from '../lib/progress.ts';
import { type Simulator, serverLabels, startGenerator, startServer } from '../lib/servers.ts';
import { FANOUT_MARKETS } from './fanout.ts';

export interface MemoryRun {
  server: string;
  connections: number;
  connected: number;
  rssBeforeMb: number;
  rssAfterMb: number;
  rssPerConnectionKb: number;
  heapPerConnectionKb: number;
  firstFrameBytes: number;
}

export interface MemoryResult {
  runs: MemoryRun[];
  ratios: { rssVsWs: number; heapVsWs: number };
}

interface Memory {
  rss: number;
  heapUsed: number;
}

const MB = 1024 * 1024;

async function measureMemory(
  kind: ServerKind,
  connections: number,
  sim: Simulator,
  firstFrameBytes: number,
  deflate = false,
): Promise<MemoryRun> {
  const label = deflate ? `${serverLabels[kind]}, clients compressing` : serverLabels[kind];
  const server = await startServer(kind, { upstream: sim.url, pollMs: 1_000 });
  const generator = await startGenerator();
  try {
    if (kind !== 'relay') await server.child.request('welcome', { bytes: firstFrameBytes });
    await sleep(500);
    const before = await server.child.request<Memory>('memory');
    progress(`  ${label}: opening ${connections} idle subscribed connections`);
    const markets = sim.markets.slice(0, FANOUT_MARKETS);
    const { connected } = await generator.request<{ connected: number }>(
      'connect',
      {
        kind,
        url: server.url,
        groups: [
          {
            label: 'idle',
            count: connections,
            channel: 'book',
            depth: 10,
            assign: 'one-each',
            markets,
            topics: markets.length,
            deflate,
          },
        ],
      },
      300_000,
    );
    await generator.request('awaitFirst', { timeoutMs: 60_000 }, 90_000);
    await sleep(2_000);
    const after = await server.child.request<Memory>('memory');
    const stats = await generator.request<{ groups: Record<string, GroupCounts> }>('stats');
    const idle = stats.groups.idle;
    // The relay's snapshot size is measured; the baselines send that size.
    const firstBytes =
      kind === 'relay' && idle !== undefined && idle.snapshots > 0
        ? idle.snapshotBytes / idle.snapshots
        : firstFrameBytes;
    return {
      server: label,
      connections,
      connected,
      rssBeforeMb: before.rss / MB,
      rssAfterMb: after.rss / MB,
      rssPerConnectionKb: (after.rss - before.rss) / 1024 / connected,
      heapPerConnectionKb: (after.heapUsed - before.heapUsed) / 1024 / connected,
      firstFrameBytes: firstBytes,
    };
  } finally {
    await generator.stop();
    await server.child.stop();
  }
}

export async function runMemory(options: BenchOptions, sim: Simulator): Promise<MemoryResult> {
  const connections = options.memoryConnections;
  progress(`memory: ${connections} idle subscribed connections (books frozen)`);
  await sim.child.request('freeze');
  try {
    const relay = await measureMemory('relay', connections, sim, 0);
    const relayDeflate = await measureMemory('relay', connections, sim, 0, true);
    const ws = await measureMemory('ws', connections, sim, relay.firstFrameBytes);
    const socketIo = await measureMemory('socketio', connections, sim, relay.firstFrameBytes);
    const fastify = await measureMemory('fastify', connections, sim, relay.firstFrameBytes);
    return {
      runs: [relay, relayDeflate, ws, socketIo, fastify],
      ratios: {
        rssVsWs: relay.rssPerConnectionKb / ws.rssPerConnectionKb,
        heapVsWs: relay.heapPerConnectionKb / ws.heapPerConnectionKb,
      },
    };
  } finally {
    await sim.child.request('unfreeze');
  }
}
