/**
 * @module bench/scenarios/fanout
 * Scenario 1, fan-out cost: N clients, each subscribed to the depth-10 book of one of ten busy
 * markets, against an idiomatic `ws` broadcast and socket.io sending frames of the relay's
 * measured size at the relay's measured rate to the same N, in the same run, then the native
 * anchors (uWebSockets.js's pub/sub and the one-write-per-delivery floor) on the same plan.
 */
import type { BroadcastPlan } from '../lib/baselines/baseline-frame.ts';
import {
  measureBaselines,
  measureBroadcast,
  measureNativeAnchors,
  type RunMetrics,
} from '../lib/broadcast-run.ts';
import type { BenchOptions } from '../lib/options.ts';
import { progress } from '../lib/progress.ts';
import type { Simulator } from '../lib/servers.ts';

export const FANOUT_MARKETS = 10;
export const POLL_MS = 500;

export interface FanoutResult {
  clients: number;
  /** The relay, `ws`, socket.io, uWS (when installed), the floor. */
  runs: RunMetrics[];
  /** Why there is no uWS row. */
  uwsMissing?: string;
  /**
   * The relay's CPU per delivery without its fixed polling cost (upstream requests, validation,
   * aggregation, diff: what the baselines do not do at all): (CPU - CPU of the one-client-per-market
   * run) / deliveries. It is what one more client costs.
   */
  relayFanoutOnlyCpuPerDeliveryUs: number;
  ratios: {
    cpuVsWs: number;
    cpuVsSocketIo: number;
    fanoutOnlyCpuVsWs: number;
    p99VsWs: number;
    /** Without the uWS row: undefined. */
    cpuVsUws?: number;
    p99VsUws?: number;
    floorCpuVsWs: number;
  };
}

/** The relay's polling cost: one client per market, so almost nothing is fanned out. */
export interface PollingCost {
  clients: number;
  cpuMsPerSec: number;
  pollsPerSec: number;
  cpuPerPollMs: number;
}

export async function runFanout(
  options: BenchOptions,
  sim: Simulator,
): Promise<{ pollingCost: PollingCost; results: FanoutResult[] }> {
  const markets = sim.markets.slice(0, FANOUT_MARKETS);
  progress(`fanout: the relay's fixed polling cost (${markets.length} clients, one per market)`);
  const idle = await measureBroadcast({
    kind: 'relay',
    clients: [
      { label: 'clients', count: markets.length, channel: 'book', depth: 10, assign: 'one-each', markets },
    ],
    server: {
      upstream: sim.url,
      pollMs: POLL_MS,
      cpuProf: options.cpuProf,
      profileName: 'relay-polling-only',
    },
    warmupMs: options.warmupMs,
    windowMs: options.windowMs,
  });
  const pollsPerSec = (markets.length * 1000) / POLL_MS;
  const pollingCost: PollingCost = {
    clients: markets.length,
    cpuMsPerSec: idle.serverCpuMs / idle.windowS,
    pollsPerSec,
    cpuPerPollMs: idle.serverCpuMs / idle.windowS / pollsPerSec,
  };
  const results: FanoutResult[] = [];
  for (const clients of options.fanoutClients) {
    progress(`fanout: ${clients} clients, ${markets.length} markets (book depth 10), poll ${POLL_MS} ms`);
    const relay = await measureBroadcast({
      kind: 'relay',
      clients: [
        { label: 'clients', count: clients, channel: 'book', depth: 10, assign: 'one-each', markets },
      ],
      server: {
        upstream: sim.url,
        pollMs: POLL_MS,
        cpuProf: options.cpuProf,
        profileName: `relay-fanout-${clients}`,
      },
      warmupMs: options.warmupMs,
      windowMs: options.windowMs,
      sdkCheck: { markets, depth: 10 },
    });
    const plan: BroadcastPlan = {
      cycleMs: POLL_MS,
      messagesPerCycle: (relay.messagesPerClientPerSec * POLL_MS) / 1000,
      frameBytes: relay.meanFrameBytes,
      stamp: 'message',
    };
    const baselineClients = { label: 'clients', count: clients, topics: markets.length };
    const { ws, socketIo } = await measureBaselines(baselineClients, plan, options);
    const { uws, uwsMissing, floor } = await measureNativeAnchors(baselineClients, plan, options);
    const fanoutOnly =
      ((relay.serverCpuMs - pollingCost.cpuMsPerSec * relay.windowS) * 1000) / Math.max(1, relay.deliveries);
    results.push({
      clients,
      runs: uws === undefined ? [relay, ws, socketIo, floor] : [relay, ws, socketIo, uws, floor],
      ...(uwsMissing === undefined ? {} : { uwsMissing }),
      relayFanoutOnlyCpuPerDeliveryUs: fanoutOnly,
      ratios: {
        cpuVsWs: relay.cpuPerDeliveryUs / ws.cpuPerDeliveryUs,
        cpuVsSocketIo: relay.cpuPerDeliveryUs / socketIo.cpuPerDeliveryUs,
        fanoutOnlyCpuVsWs: fanoutOnly / ws.cpuPerDeliveryUs,
        p99VsWs: relay.latency.p99Ms / ws.latency.p99Ms,
        ...(uws === undefined
          ? {}
          : {
              cpuVsUws: relay.cpuPerDeliveryUs / uws.cpuPerDeliveryUs,
              p99VsUws: relay.latency.p99Ms / uws.latency.p99Ms,
            }),
        floorCpuVsWs: floor.cpuPerDeliveryUs / ws.cpuPerDeliveryUs,
      },
    });
  }
  return { pollingCost, results };
}
