/**
 * @module bench/scenarios/markets
 * Scenario 2, many markets per client: every client subscribed to the `price` channel of 20 busy
 * markets. The relay gets all 20 in one batch response per poll (docs/upstream.md) and
 * corks each connection for the tick, so one poll cycle costs one write per client; the baselines
 * send the same number of same-sized messages per client per cycle naively, one write each.
 */
import type { BroadcastPlan } from '../lib/baselines/baseline-frame.ts';
import { measureBaselines, measureBroadcast, type RunMetrics } from '../lib/broadcast-run.ts';
import type { BenchOptions } from '../lib/options.ts';
import { progress } from '../lib/progress.ts';
import type { Simulator } from '../lib/servers.ts';
import { POLL_MS } from './fanout.ts';

export const MARKETS_PER_CLIENT = 20;

export interface MarketsResult {
  clients: number;
  marketsPerClient: number;
  runs: RunMetrics[];
  ratios: { cpuVsWs: number; cpuVsSocketIo: number; p99VsWs: number };
}

export async function runMarkets(options: BenchOptions, sim: Simulator): Promise<MarketsResult> {
  const markets = sim.markets.slice(0, MARKETS_PER_CLIENT);
  if (markets.length < MARKETS_PER_CLIENT)
    throw new Error(`the simulator has only ${markets.length} busy markets`);
  const clients = options.marketsClients;
  progress(`markets: ${clients} clients x ${markets.length} markets (price channel), poll ${POLL_MS} ms`);
  const relay = await measureBroadcast({
    kind: 'relay',
    clients: [{ label: 'clients', count: clients, channel: 'price', assign: 'all', markets }],
    server: { upstream: sim.url, pollMs: POLL_MS, cpuProf: options.cpuProf, profileName: 'relay-markets' },
    warmupMs: options.warmupMs,
    windowMs: options.windowMs,
  });
  const plan: BroadcastPlan = {
    cycleMs: POLL_MS,
    messagesPerCycle: (relay.messagesPerClientPerSec * POLL_MS) / 1000,
    frameBytes: relay.meanFrameBytes,
    stamp: 'cycle',
  };
  const { ws, socketIo } = await measureBaselines(
    { label: 'clients', count: clients, topics: 1 },
    plan,
    options,
  );
  return {
    clients,
    marketsPerClient: markets.length,
    runs: [relay, ws, socketIo],
    ratios: {
      cpuVsWs: relay.cpuPerDeliveryUs / ws.cpuPerDeliveryUs,
      cpuVsSocketIo: relay.cpuPerDeliveryUs / socketIo.cpuPerDeliveryUs,
      p99VsWs: relay.latency.p99Ms / ws.latency.p99Ms,
    },
  };
}
