/**
 * @module bench/scenarios/fanout-multi
 * Scenario 7, several books per client (issue 16): N clients each on the same 10 busy books, N
 * clients each on 10 different books out of 100, and many clients on one book. Book polls return
 * one market at a time, so without write coalescing a client of 10 books costs 10 writes per poll
 * cycle; the baselines send each topic's message to its members with one write each, as idiomatic
 * `ws` and socket.io code does. Same run, same clients, same topics, same rate and frame size. Two
 * native anchors follow (issue 37): uWebSockets.js's C++ pub/sub (bench/children/uws-baseline.ts),
 * and the floor (bench/children/floor-baseline.ts), the least any Node server writing one message
 * per socket write can spend: what no fan-out code can go below without fewer writes.
 */
import type { ClientGroup } from '../children/generator.ts';
import type { BroadcastPlan } from '../lib/baselines/baseline-frame.ts';
import {
  measureBaselines,
  measureBroadcast,
  measureNativeAnchors,
  type RunMetrics,
} from '../lib/broadcast-run.ts';
import type { BenchOptions } from '../lib/options.ts';
import { progress } from '../lib/progress.ts';
import { type Simulator, startSim } from '../lib/servers.ts';

/** Enough simulated markets for 100 busy books (about 86% are two-sided). */
const SIM_MARKETS = 150;
const SPREAD_MARKETS = 100;
const BOOKS_PER_CLIENT = 10;
/** Issue 37's small one-book shape. */
const SMALL_SINGLE_CLIENTS = 200;

/** A limit on the relay's figure over an anchor's in the same run, and the issue that set it. */
export interface ShapeTarget {
  metric: 'cpu' | 'p99';
  vs: 'ws' | 'socket.io' | 'uWS';
  limit: number;
  issue: number;
}

interface Shape {
  name: string;
  clients: number;
  /** Books every client picks from. */
  markets: number;
  perClient: number;
  pollMs: number;
  targets: ShapeTarget[];
}

/** Issue 16's targets of the shapes it set out: CPU per delivery <= 0.7x ws and socket.io, p99 <= 1.25x ws. */
const ISSUE_16: ShapeTarget[] = [
  { metric: 'cpu', vs: 'ws', limit: 0.7, issue: 16 },
  { metric: 'cpu', vs: 'socket.io', limit: 0.7, issue: 16 },
  { metric: 'p99', vs: 'ws', limit: 1.25, issue: 16 },
];

export interface MultiShapeResult extends Shape {
  /** The relay, `ws`, socket.io, uWS (when installed), then the floor (one prebuilt frame, one socket write per delivery). */
  runs: RunMetrics[];
  /** Why there is no uWS row. */
  uwsMissing?: string;
  ratios: {
    cpuVsWs: number;
    cpuVsSocketIo: number;
    p99VsWs: number;
    /** Without the uWS row: undefined. */
    cpuVsUws?: number;
    p99VsUws?: number;
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
      targets: [
        ...ISSUE_16,
        { metric: 'cpu', vs: 'ws', limit: 0.5, issue: 37 },
        { metric: 'p99', vs: 'ws', limit: 1.0, issue: 37 },
      ],
    },
    {
      // 100 books polled for N x 10 subscriptions: the polling cost is spread over 10x fewer
      // deliveries per book than above, so no CPU target; the row shows what this shape costs.
      name: `${clients} x 10 of ${SPREAD_MARKETS} books`,
      clients,
      markets: SPREAD_MARKETS,
      perClient: BOOKS_PER_CLIENT,
      pollMs: 500,
      targets: [],
    },
    {
      name: `${options.singleClients} x 1, one book`,
      clients: options.singleClients,
      markets: 1,
      perClient: 1,
      pollMs: 200,
      targets: [
        ...ISSUE_16,
        { metric: 'cpu', vs: 'ws', limit: 0.8, issue: 37 },
        { metric: 'cpu', vs: 'uWS', limit: 1.3, issue: 37 },
      ],
    },
    {
      // Few clients on one book: the relay's per-poll work is shared by ten times fewer deliveries.
      name: `${SMALL_SINGLE_CLIENTS} x 1, one book`,
      clients: SMALL_SINGLE_CLIENTS,
      markets: 1,
      perClient: 1,
      pollMs: 200,
      targets: [{ metric: 'cpu', vs: 'ws', limit: 0.9, issue: 37 }],
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
    // JSON without deflate, as every measured client and every anchor's: a deflating checker would
    // have the relay compress each message for it alone, work no anchor does (5 % of the relay's
    // main thread at 200 x 1).
    sdkCheck: { markets: markets.slice(0, shape.perClient), depth: 10, deflate: false },
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
  const { uws, uwsMissing, floor } = await measureNativeAnchors(baselineClients, plan, options);
  return {
    ...shape,
    runs: uws === undefined ? [relay, ws, socketIo, floor] : [relay, ws, socketIo, uws, floor],
    ...(uwsMissing === undefined ? {} : { uwsMissing }),
    ratios: {
      cpuVsWs: relay.cpuPerDeliveryUs / ws.cpuPerDeliveryUs,
      cpuVsSocketIo: relay.cpuPerDeliveryUs / socketIo.cpuPerDeliveryUs,
      p99VsWs: relay.latency.p99Ms / ws.latency.p99Ms,
      ...(uws === undefined
        ? {}
        : {
            cpuVsUws: relay.cpuPerDeliveryUs / uws.cpuPerDeliveryUs,
            p99VsUws: relay.latency.p99Ms / uws.latency.p99Ms,
          }),
      floorCpuVsWs: floor.cpuPerDeliveryUs / ws.cpuPerDeliveryUs,
      floorKernelVsWs: floor.kernelPerDeliveryUs / ws.cpuPerDeliveryUs,
    },
  };
}
