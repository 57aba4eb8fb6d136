/**
 * @module bench/scenarios/capacity
 * What one machine holds (issue 37), against `market-relay serve` as an operator starts it:
 *
 * 1. Idle: N subscribed connections (15,000 in the full run) on one relay process with heartbeats
 *    on, each on the depth-10 book of one of ten markets that change every few seconds: resident
 *    size per connection, the CPU the relay spends holding them, and whether each receives its
 *    stream (every client its snapshot; updates per client against the stream's; the first client
 *    of each market's group in each generator decodes every frame and checks `seq` and checksum).
 * 2. Ramp: the same books polled every 50 ms, markets changing every 100 ms (about 10 updates per
 *    client per second), clients added in batches; per step the deliveries per second, their
 *    latency from `rts` and the book requests per market per poll interval, until p99 passes
 *    100 ms. The sustained rate is the highest with p99 <= 100 ms (also shown: of the steps whose
 *    clients still got 90 % of the first step's updates per second): one process, `--workers 2`, and
 *    the `ws` anchor sending frames of the relay's size at the relay's rate per client.
 *
 * The load generators are split over processes of at most 5,000 sockets each (each process has
 * its own file limit).
 */
import type { ClientGroup, GroupCounts } from '../children/generator.ts';
import type { Child } from '../lib/ipc.ts';
import type { LatencySummary } from '../lib/latency.ts';
import type { BenchOptions } from '../lib/options.ts';
import { progress, sleep } from '../lib/progress.ts';
import { type Simulator, startGenerator, startServer, startSim } from '../lib/servers.ts';
import { type UsageDelta, type UsageSample, usageBetween } from '../lib/usage.ts';
import { cpuShareBetween, type RelayProgram, startRelayProgram } from './capacity-program.ts';

const MARKETS = 10;
const SOCKETS_PER_GENERATOR = 5_000;
const IDLE_TICK_MS = 5_000;
const IDLE_POLL_MS = 1_000;
const HEARTBEAT_MS = 5_000;
const RAMP_POLL_MS = 50;
/** The ramp's markets change this often: about 10 updates per client per second. */
const RAMP_TICK_MS = 100;
export const P99_LIMIT_MS = 100;
/**
 * A step keeps pace when its clients still get this share of the updates per second that the first
 * step's clients got. A relay short of CPU polls late and so sends fewer, conflated updates: its
 * latency from `rts` stays low while its clients fall behind the market.
 */
export const KEPT_PACE = 0.9;

export interface IdleResult {
  connections: number;
  connected: number;
  /** Clients that had their snapshot before the window. */
  withSnapshot: number;
  generators: number;
  baseRssMb: number;
  rssMb: number;
  rssPerConnectionKb: number;
  /** Relay CPU over wall time while holding them (1 = one core). */
  cpuShare: number;
  deliveriesPerSec: number;
  /** Updates each client received in the window, on average, against what its stream sent. */
  updatesPerClient: number;
  sampledFrames: number;
  sampleFailures: number;
}

/** A server's CPU over one window (1 = one core). */
interface CpuMeter {
  start(): Promise<void>;
  end(): Promise<number>;
}

export interface RampStep {
  /** Clients connected (and subscribed) in this step. */
  clients: number;
  deliveriesPerSec: number;
  latency: LatencySummary;
  cpuShare: number;
  /** The load generators' CPU over the window (1 = one core): what the server leaves them. */
  generatorCpuShare: number;
  meanFrameBytes: number;
  /** Relay runs: book requests upstream served per market per poll interval. */
  bookRequestsPerMarketPerPoll?: number;
  sampleFailures: number;
}

export interface RampResult {
  server: string;
  steps: RampStep[];
  /** The highest deliveries/s of a step whose p99 stayed within P99_LIMIT_MS (0: none did). */
  sustainedPerSec: number;
  /** The same, of the steps whose clients also kept pace (KEPT_PACE). */
  keptPacePerSec: number;
}

export interface CapacityResult {
  idle: IdleResult;
  ramps: RampResult[];
}

interface GeneratorStats {
  groups: Record<string, GroupCounts>;
  latency: LatencySummary;
  usage: UsageDelta;
}

/**
 * Clients over generator processes of at most 5,000 sockets each, one group per market in each
 * (its first client checks every frame); `add` connects more of them beside those already there.
 */
class Generators {
  readonly children: Child[] = [];

  constructor(
    private readonly kind: 'relay' | 'ws',
    private readonly url: string,
    private readonly markets: string[],
  ) {}

  /** Connects `clients` more; resolves once they are connected and (relay) have their snapshot. */
  async add(clients: number): Promise<{ connected: number; withSnapshot: number }> {
    const count = Math.ceil(clients / SOCKETS_PER_GENERATOR);
    const children = await Promise.all(Array.from({ length: count }, () => startGenerator()));
    this.children.push(...children);
    const results = await Promise.all(
      children.map(async (child, g) => {
        const share = Math.floor(clients / count) + (g < clients % count ? 1 : 0);
        const groups: ClientGroup[] = this.markets.map((market, m) => ({
          label: `m${m}`,
          count: Math.floor(share / this.markets.length) + (m < share % this.markets.length ? 1 : 0),
          ...(this.kind === 'relay'
            ? { channel: 'book' as const, depth: 10, assign: 'one-each' as const, markets: [market] }
            : { topics: this.markets.length, topicsPerClient: 1 }),
        }));
        const { connected } = await child.request<{ connected: number }>(
          'connect',
          { kind: this.kind, url: this.url, groups },
          Math.max(300_000, share * 100),
        );
        if (this.kind !== 'relay') return { connected, withSnapshot: connected };
        const { ready } = await child.request<{ ready: number }>('awaitFirst', { timeoutMs: 60_000 }, 90_000);
        return { connected, withSnapshot: ready };
      }),
    );
    return {
      connected: results.reduce((total, result) => total + result.connected, 0),
      withSnapshot: results.reduce((total, result) => total + result.withSnapshot, 0),
    };
  }

  reset(): Promise<unknown> {
    return Promise.all(this.children.map((child) => child.request('reset')));
  }

  /** Every generator's groups; latency: the worst generator's (their histograms are not merged). */
  async stats(): Promise<{ counts: GroupCounts[]; latency: LatencySummary; cpuShare: number }> {
    const all = await Promise.all(this.children.map((child) => child.request<GeneratorStats>('stats')));
    const worst = (pick: (latency: LatencySummary) => number) => Math.max(...all.map((s) => pick(s.latency)));
    return {
      cpuShare: all.reduce((total, s) => total + s.usage.cpuShare, 0),
      counts: all.flatMap((s) => Object.values(s.groups)),
      latency: {
        count: all.reduce((total, s) => total + s.latency.count, 0),
        p50Ms: worst((l) => l.p50Ms),
        p99Ms: worst((l) => l.p99Ms),
        maxMs: worst((l) => l.maxMs),
      },
    };
  }

  stop(): Promise<unknown> {
    return Promise.all(this.children.map((child) => child.stop()));
  }
}

const sum = (counts: GroupCounts[], pick: (c: GroupCounts) => number) =>
  counts.reduce((total, c) => total + pick(c), 0);

async function setTick(sim: Simulator, tickMs: number): Promise<void> {
  const response = await fetch(`${sim.url}/_sim/activity`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ tickMs }),
  });
  if (!response.ok) throw new Error(`simulator refused tick ${tickMs}: ${response.status}`);
}

async function bookRequests(sim: Simulator): Promise<number> {
  const { byPath } = await sim.child.request<{ byPath: Record<string, number> }>('requests');
  return byPath['/clob/orderbook'] ?? 0;
}

async function measureIdle(options: BenchOptions, sim: Simulator, markets: string[]): Promise<IdleResult> {
  const connections = options.capacityConnections;
  progress(
    `capacity: ${connections} idle subscribed connections on one relay process, heartbeats every ${HEARTBEAT_MS / 1000} s`,
  );
  await setTick(sim, IDLE_TICK_MS);
  const relay = await startRelayProgram({
    upstream: sim.url,
    workers: 1,
    bookPollMs: IDLE_POLL_MS,
    heartbeatMs: HEARTBEAT_MS,
  });
  const generators = new Generators('relay', relay.wsUrl, markets);
  try {
    await sleep(2_000);
    const base = relay.usage();
    const { connected, withSnapshot } = await generators.add(connections);
    progress(`  ${connected} connected, ${withSnapshot} with their snapshot`);
    await sleep(options.warmupMs);
    await generators.reset();
    const start = relay.usage();
    await sleep(Math.max(options.windowMs, 2 * IDLE_TICK_MS));
    const end = relay.usage();
    const { counts } = await generators.stats();
    const windowS = (end.at - start.at) / 1000;
    const deliveries = sum(counts, (c) => c.updates);
    // Each market's stream sends one update per change; its clients should each get all of them.
    const streamUpdates = windowS / (IDLE_TICK_MS / 1000);
    return {
      connections,
      connected,
      withSnapshot,
      generators: generators.children.length,
      baseRssMb: base.rssBytes / 2 ** 20,
      rssMb: end.rssBytes / 2 ** 20,
      rssPerConnectionKb: (end.rssBytes - base.rssBytes) / 1024 / Math.max(1, connected),
      cpuShare: cpuShareBetween(start, end),
      deliveriesPerSec: deliveries / windowS,
      updatesPerClient: deliveries / Math.max(1, connected) / streamUpdates,
      sampledFrames: sum(counts, (c) => c.sampled),
      sampleFailures: sum(counts, (c) => c.sampleFailures),
    };
  } finally {
    await generators.stop();
    await relay.stop();
  }
}

/**
 * One measured step per batch of clients added, at a fixed rate per client, until p99 passes the
 * limit or the batches run out.
 */
async function ramp(
  options: BenchOptions,
  generators: Generators,
  measure: () => CpuMeter,
  sim: Simulator | undefined,
  markets: string[],
): Promise<RampStep[]> {
  const steps: RampStep[] = [];
  for (
    let clients = options.capacityBatch;
    clients <= options.capacityMaxClients;
    clients += options.capacityBatch
  ) {
    try {
      await generators.add(options.capacityBatch);
    } catch (error) {
      // A step that could not connect ends this server's ramp, not the run: the steps before stand.
      progress(
        `  ${clients} clients: not connected (${error instanceof Error ? error.message : String(error)})`,
      );
      break;
    }
    await sleep(options.warmupMs);
    await Promise.all([generators.reset(), sim?.child.request('clearRequests')]);
    const cpu = measure();
    await cpu.start();
    const from = Date.now();
    await sleep(options.windowMs);
    const cpuShare = await cpu.end();
    const windowS = (Date.now() - from) / 1000;
    const [{ counts, latency, cpuShare: generatorCpuShare }, books] = await Promise.all([
      generators.stats(),
      sim === undefined ? undefined : bookRequests(sim),
    ]);
    const deliveries = sum(counts, (c) => c.updates);
    steps.push({
      clients,
      deliveriesPerSec: deliveries / windowS,
      latency,
      cpuShare,
      generatorCpuShare,
      meanFrameBytes: sum(counts, (c) => c.updateBytes) / Math.max(1, deliveries),
      ...(books === undefined
        ? {}
        : { bookRequestsPerMarketPerPoll: books / markets.length / ((windowS * 1000) / RAMP_POLL_MS) }),
      sampleFailures: sum(counts, (c) => c.sampleFailures),
    });
    progress(
      `  ${clients} clients: ${Math.round(deliveries / windowS)} deliveries/s, p99 ${latency.p99Ms.toFixed(1)} ms`,
    );
    if (latency.p99Ms > P99_LIMIT_MS) break;
  }
  return steps;
}

async function rampRelay(
  options: BenchOptions,
  sim: Simulator,
  markets: string[],
  workers: number,
): Promise<RampResult> {
  const server = workers === 1 ? 'market-relay, one process' : `market-relay --workers ${workers}`;
  progress(
    `capacity ramp: ${server}, books polled every ${RAMP_POLL_MS} ms, markets changing every ${RAMP_TICK_MS} ms`,
  );
  await setTick(sim, RAMP_TICK_MS);
  const relay: RelayProgram = await startRelayProgram({
    upstream: sim.url,
    workers,
    bookPollMs: RAMP_POLL_MS,
    heartbeatMs: HEARTBEAT_MS,
    ...(options.cpuProf ? { profileName: `capacity-workers-${workers}` } : {}),
  });
  const generators = new Generators('relay', relay.wsUrl, markets);
  try {
    const measure = (): CpuMeter => {
      let start = relay.usage();
      return {
        start: async () => {
          start = relay.usage();
        },
        end: async () => cpuShareBetween(start, relay.usage()),
      };
    };
    const steps = await ramp(options, generators, measure, sim, markets);
    return { server, steps, ...sustainedRates(steps) };
  } finally {
    await generators.stop();
    await relay.stop();
  }
}

/** The `ws` anchor: frames of the relay's size at the relay's rate per client, clients added alike. */
async function rampWs(options: BenchOptions, markets: string[], relayRamp: RampResult): Promise<RampResult> {
  progress('capacity ramp: ws (idiomatic)');
  const first = relayRamp.steps[0];
  if (first === undefined) throw new Error('the relay ramp measured no step');
  const server = await startServer('ws');
  const generators = new Generators('ws', server.url, markets);
  try {
    const perClientPerSec = first.deliveriesPerSec / first.clients;
    await server.child.request('start', {
      cycleMs: RAMP_TICK_MS,
      messagesPerCycle: (perClientPerSec * RAMP_TICK_MS) / 1000,
      frameBytes: Math.max(64, Math.round(first.meanFrameBytes)),
      stamp: 'message',
    });
    const measure = (): CpuMeter => {
      let start: UsageSample | undefined;
      return {
        start: async () => {
          start = await server.child.request<UsageSample>('usage');
        },
        end: async () => usageBetween(start!, await server.child.request<UsageSample>('usage')).cpuShare,
      };
    };
    const steps = await ramp(options, generators, measure, undefined, markets);
    return { server: 'ws (idiomatic)', steps, ...sustainedRates(steps) };
  } finally {
    await generators.stop();
    await server.child.stop();
  }
}

/** Updates per client per second in a step. */
export function perClientRate(step: RampStep): number {
  return step.deliveriesPerSec / Math.max(1, step.clients);
}

/** Whether a step's p99 stayed within the limit. */
export function sustains(step: RampStep): boolean {
  return step.latency.p99Ms <= P99_LIMIT_MS;
}

function sustainedRates(steps: RampStep[]): Pick<RampResult, 'sustainedPerSec' | 'keptPacePerSec'> {
  const first = steps[0];
  const pace = first === undefined ? 0 : KEPT_PACE * perClientRate(first);
  const highest = (kept: RampStep[]) => Math.max(0, ...kept.map((step) => step.deliveriesPerSec));
  return {
    sustainedPerSec: highest(steps.filter(sustains)),
    keptPacePerSec: highest(steps.filter((step) => sustains(step) && perClientRate(step) >= pace)),
  };
}

export async function runCapacity(options: BenchOptions): Promise<CapacityResult> {
  const sim = await startSim(IDLE_TICK_MS);
  try {
    const markets = sim.markets.slice(0, MARKETS);
    const idle = await measureIdle(options, sim, markets);
    const single = await rampRelay(options, sim, markets, 1);
    const twoWorkers = await rampRelay(options, sim, markets, 2);
    const ws = await rampWs(options, markets, single);
    return { idle, ramps: [single, twoWorkers, ws] };
  } finally {
    await sim.child.stop();
  }
}
