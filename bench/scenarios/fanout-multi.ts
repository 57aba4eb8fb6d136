/**
 * @module bench/scenarios/fanout-multi
 * Scenario 7, several books per client (issue 16): N clients each on the same 10 busy books, N
 * clients each on 10 different books out of 100, and many clients on one book. Book polls return
 * one market at a time, so without write coalescing a client of 10 books costs 10 writes per poll
 * cycle; the baselines send each topic's message to its members with one write each, as idiomatic
 * `ws` and socket.io code does. Same run, same clients, same topics, same rate and frame size. A
 * fourth row, the floor (bench/children/floor-baseline.ts), is the least any server writing one
 * message per socket write can spend: what no fan-out code can go below without fewer writes.
 */
import type { ClientGroup } from '../children/generator.ts';
import type { BroadcastPlan } from '../lib/baseline-frame.ts';
import { measureBaselines, measureBroadcast, measureFloor, type RunMetrics } from '../lib/broadcast-run.ts';
import type { BenchOptions } from '../lib/options.ts';
import { progress } from '../lib/progress.ts';
import { type Simulator, startSim } from '../lib/servers.ts';

/** Enough simulated markets for 100 busy books (about 86% are two-sided). */
const SIM_MARKETS = 150;
const SPREAD_MARKETS = 100;
const BOOKS_PER_CLIENT = 10;

interface Shape {
  name: string;
  clients: number;
  /** Books every client picks from. */
  markets: number;
  perClient: number;
  pollMs: number;
  /** Issue 16's targets apply (CPU per delivery <= 0.7x ws, p99 <= 1.25x ws). */
  targets: boolean;
}

export interface MultiShapeResult extends Shape {
  /** The relay, `ws`, socket.io, then the floor (one prebuilt frame, one socket write per delivery). */
  runs: RunMetrics[];
  ratios: {
    cpuVsWs: number;
    cpuVsSocketIo: number;
    p99VsWs: number;
    floorCpuVsWs: number;
    /**
     * The floor's kernel time alone over `ws`'s whole CPU per delivery: the least a server making
     * one socket write per delivery could reach even if its own code cost nothing.
     */
    floorKernelVsWs: number;
  };
}

/** The shapes whose name contains `--shape` (all without it). */
export function multiShapes(options: BenchOptions): Shape[] {
  const clients = options.multiClients;
  const shapes: Shape[] = [
    {
      name: `${clients} x 10, the same 10 books`,
      clients,
      markets: BOOKS_PER_CLIENT,
      perClient: BOOKS_PER_CLIENT,
      pollMs: 500,
      targets: true,
    },
    {
      // 100 books polled for N x 10 subscriptions: the polling cost is spread over 10x fewer
      // deliveries per book than above, so no CPU target; the row shows what this shape costs.
      name: `${clients} x 10 of ${SPREAD_MARKETS} books`,
      clients,
      markets: SPREAD_MARKETS,
      perClient: BOOKS_PER_CLIENT,
      pollMs: 500,
      targets: false,
    },
    {
      name: `${options.singleClients} x 1, one book`,
      clients: options.singleClients,
      markets: 1,
      perClient: 1,
      pollMs: 200,
      targets: true,
    },
  ];
  return shapes.filter((shape) => options.shape === undefined || shape.name.includes(options.shape));
}

export async function runFanoutMulti(options: BenchOptions): Promise<MultiShapeResult[]> {
  const sim: Simulator = await startSim(100, SIM_MARKETS);
  try {
    if (sim.markets.length < SPREAD_MARKETS)
      throw new Error(`the simulator has only ${sim.markets.length} busy markets`);
    const results: MultiShapeResult[] = [];
    for (const shape of multiShapes(options)) results.push(await runShape(options, sim, shape));
    return results;
  } finally {
    await sim.child.stop();
  }
}

async function runShape(options: BenchOptions, sim: Simulator, shape: Shape): Promise<MultiShapeResult> {
  const markets = sim.markets.slice(0, shape.markets);
  progress(`fanout-multi: ${shape.name} (book depth 10), poll ${shape.pollMs} ms`);
  const group: ClientGroup = {
    label: 'clients',
    count: shape.clients,
    channel: 'book',
    depth: 10,
    assign: 'window',
    perClient: shape.perClient,
    markets,
  };
  const relay = await measureBroadcast({
    kind: 'relay',
    clients: [group],
    server: {
      upstream: sim.url,
      pollMs: shape.pollMs,
      cpuProf: options.cpuProf,
      profileName: `relay-multi-${shape.clients}x${shape.perClient}-of-${shape.markets}`,
    },
    warmupMs: options.warmupMs,
    windowMs: options.windowMs,
    sdkCheck: { markets: markets.slice(0, shape.perClient), depth: 10 },
  });
  // The relay's rate per stream (one topic of the baselines), per poll cycle.
  const plan: BroadcastPlan = {
    cycleMs: shape.pollMs,
    messagesPerCycle: (relay.messagesPerClientPerSec / shape.perClient) * (shape.pollMs / 1000),
    frameBytes: relay.meanFrameBytes,
    stamp: 'message',
  };
  const baselineClients: ClientGroup = {
    label: 'clients',
    count: shape.clients,
    topics: shape.markets,
    topicsPerClient: shape.perClient,
  };
  const { ws, socketIo } = await measureBaselines(baselineClients, plan, options);
  const floor = await measureFloor(baselineClients, plan, options);
  return {
    ...shape,
    runs: [relay, ws, socketIo, floor],
    ratios: {
      cpuVsWs: relay.cpuPerDeliveryUs / ws.cpuPerDeliveryUs,
      cpuVsSocketIo: relay.cpuPerDeliveryUs / socketIo.cpuPerDeliveryUs,
      p99VsWs: relay.latency.p99Ms / ws.latency.p99Ms,
      floorCpuVsWs: floor.cpuPerDeliveryUs / ws.cpuPerDeliveryUs,
      floorKernelVsWs: floor.kernelPerDeliveryUs / ws.cpuPerDeliveryUs,
    },
  };
}
