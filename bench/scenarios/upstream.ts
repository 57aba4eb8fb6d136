/**
 * @module bench/scenarios/upstream
 * Scenario 4, upstream load: K clients, each subscribed to the book and the price of the same M
 * markets, through the relay, counted in the simulator's request log over a window; against the
 * status quo of every client polling upstream itself (one order book and one market-data request
 * per market per poll interval), computed as K x M x (1000 / pollMs) x 2 and measured at small K.
 */
import type { BenchOptions } from '../lib/options.ts';
import { progress, sleep } from '../lib/progress.ts';
import { type Simulator, startGenerator, startServer } from '../lib/servers.ts';

const MARKETS = 20;
const UPSTREAM_POLL_MS = 1_000;
/** Status-quo pollers measured for real (the larger K are computed). */
const MEASURED_STATUS_QUO_CLIENTS = 5;

interface RequestLog {
  total: number;
  byPath: Record<string, number>;
}

export interface UpstreamRun {
  clients: number;
  markets: number;
  relayRequestsPerSec: number;
  relayByPath: Record<string, number>;
  statusQuoRequestsPerSec: number;
  /** Status quo over relay: how many times fewer upstream requests the relay makes. */
  reduction: number;
}

export interface UpstreamResult {
  pollMs: number;
  runs: UpstreamRun[];
  statusQuoMeasured: { clients: number; requestsPerSec: number; computed: number };
  /** Largest over smallest relay request rate across K: 1.0 = independent of the client count. */
  relaySpread: number;
}

async function countRequests(sim: Simulator, windowMs: number): Promise<{ perSec: number; log: RequestLog }> {
  await sim.child.request('clearRequests');
  const started = Date.now();
  await sleep(windowMs);
  const log = await sim.child.request<RequestLog>('requests');
  return { perSec: (log.total * 1000) / (Date.now() - started), log };
}

export async function runUpstream(options: BenchOptions, sim: Simulator): Promise<UpstreamResult> {
  const markets = sim.markets.slice(0, MARKETS);
  const runs: UpstreamRun[] = [];
  for (const clients of options.upstreamClients) {
    progress(`upstream: ${clients} clients x ${markets.length} markets (book + price) through the relay`);
    const server = await startServer('relay', { upstream: sim.url, pollMs: UPSTREAM_POLL_MS });
    const generator = await startGenerator();
    try {
      await generator.request('connect', {
        kind: 'relay',
        url: server.url,
        groups: [
          { label: 'book', count: clients, channel: 'book', depth: 10, assign: 'all', markets },
          { label: 'price', count: clients, channel: 'price', assign: 'all', markets },
        ],
      });
      await generator.request('awaitFirst', { timeoutMs: 30_000 }, 60_000);
      await sleep(1_000);
      const { perSec, log } = await countRequests(sim, options.windowMs);
      const statusQuo = (clients * markets.length * 2 * 1000) / UPSTREAM_POLL_MS;
      runs.push({
        clients,
        markets: markets.length,
        relayRequestsPerSec: perSec,
        relayByPath: log.byPath,
        statusQuoRequestsPerSec: statusQuo,
        reduction: statusQuo / perSec,
      });
    } finally {
      await generator.stop();
      await server.child.stop();
    }
  }

  progress(
    `upstream: status quo measured, ${MEASURED_STATUS_QUO_CLIENTS} clients polling upstream themselves`,
  );
  const generator = await startGenerator();
  try {
    const windowMs = Math.min(options.windowMs, 6_000);
    const polling = generator.request('pollUpstream', {
      url: sim.url,
      clients: MEASURED_STATUS_QUO_CLIENTS,
      markets,
      pollMs: UPSTREAM_POLL_MS,
      durationMs: windowMs + 2_000,
    });
    await sleep(1_000);
    const { perSec } = await countRequests(sim, windowMs);
    await polling;
    const rates = runs.map((run) => run.relayRequestsPerSec);
    return {
      pollMs: UPSTREAM_POLL_MS,
      runs,
      statusQuoMeasured: {
        clients: MEASURED_STATUS_QUO_CLIENTS,
        requestsPerSec: perSec,
        computed: (MEASURED_STATUS_QUO_CLIENTS * markets.length * 2 * 1000) / UPSTREAM_POLL_MS,
      },
      relaySpread: Math.max(...rates) / Math.min(...rates),
    };
  } finally {
    await generator.stop();
  }
}
