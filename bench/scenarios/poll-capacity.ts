/**
 * @module bench/scenarios/poll-capacity
 * Poll capacity (issue 10): what one book poll costs the relay in situ against the floor measured in
 * the same run, and how many book polls per second one relay core sustains.
 * - Cost: the relay child polls `markets` books at a steady rate for one WebSocket client subscribed
 *   to all of them (depth 10), so every changed book is also delivered once (the relay's write
 *   coalescing applies as for any client watching many books); its CPU time over the window / book
 *   polls in the window. The floor is a child doing only a keep-alive undici request and
 *   `JSON.parse` for the same simulator books at the rate the relay is asked for, with the same cap
 *   on requests in flight (bench/children/poll-floor.ts), measured in the same windows (5, or 3
 *   with --quick, each half the bench window; the figure is the median of their paired ratios).
 *   Twice: with books that change on every poll (the simulator ticks every 100 ms) and with frozen
 *   books (every body the same as the last). The floor asks for the encodings the relay asks for
 *   (`gzip, br`) and decodes what comes (issue 50), and the changing books are measured against
 *   two upstreams: the simulator's `default` profile, which answers uncompressed, and the same
 *   answers compressed as asked (`br`, as a CDN does), so that neither side is flattered by bodies
 *   the other had to inflate. Each run says how many of the polls asked (405
 *   books a second) the relay made: one that falls behind costs less CPU per second and says
 *   nothing of its CPU per poll.
 * - Traced (`--otel-sample-ratio R`, issue 51): changing books once more, right after the untraced
 *   run, with the relay tracing book polls at ratio R to an OTLP/HTTP receiver that drops the spans.
 * - Capacity: the relay asked for far more polls than one core can do (every simulator market,
 *   100 ms interval, a budget no poll waits for); polls per second achieved, the relay's CPU share,
 *   and polls per CPU-second. The simulator shares the machine, so its CPU share is shown too.
 */
import { bookPolls, type PollCounts, UPSTREAM_CONNECTIONS } from '../lib/book-polls.ts';
import { type Child, forkChild } from '../lib/ipc.ts';
import type { BenchOptions } from '../lib/options.ts';
import { startOtlpSink } from '../lib/otlp-sink.ts';
import { progress, sleep } from '../lib/progress.ts';
import {
  profileFlags,
  type ServerUnderTest,
  SHIPPED_RELAY_NODE_FLAGS,
  type Simulator,
  startGenerator,
  startServer,
  startSim,
} from '../lib/servers.ts';
import { type UsageSample, usageBetween } from '../lib/usage.ts';
import { describeRound, type FloorCounts, type Round, roundBetween } from './poll-capacity-windows.ts';

const SIM_TICK_MS = 100;
const COST_POLL_MS = 1_000;
/** Issue 50: the books one client asks for every second, and the relay must keep up with. */
const COST_MARKETS = 405;
/** What the relay asks upstream for, and so what the floor asks for (src/upstream/exchange.ts). */
const ACCEPT_ENCODING = 'gzip, br';
const CAPACITY_POLL_MS = 100;
const CAPACITY_RPS = 100_000;

export type BookActivity = 'changing' | 'unchanged';

/** How upstream sends its bodies: as the simulator's `default` profile does, or `br` when asked. */
export type UpstreamForm = 'uncompressed' | 'compressed';

/** How the relay process is launched: as the project ships it, or with V8's default heap sizing. */
export type RelayLaunch = 'shipped' | 'V8 defaults';

export interface PollCostRun {
  books: BookActivity;
  upstream: UpstreamForm;
  launch: RelayLaunch;
  markets: number;
  /** Book polls per second the relay was asked for (every book every interval). */
  askedPerSec: number;
  /** The sample ratio the relay traced book polls at; undefined: not traced. */
  tracedAt: number | undefined;
  /** Book polls per second the relay made in the window (the floor's rate). */
  pollsPerSec: number;
  relayCpuPerPollUs: number;
  relayCpuShare: number;
  /** Updates its client received per second. */
  deliveriesPerSec: number;
  /** Frames per socket write to that client (write coalescing's effect, operations.md). */
  framesPerWrite: number;
  floorRequestsPerSec: number;
  floorCpuPerPollUs: number;
  floorCpuShare: number;
  /** The floor's mean request time (sent to parsed), ms, against the relay's mean poll time. */
  floorRequestMs: number;
  relayPollMs: number;
  /** Share of the floor's bodies that came compressed. */
  floorCompressedShare: number;
  meanBodyBytes: number;
  /** Relay CPU per poll over the floor's: the median of the windows' ratios, and their range. */
  ratio: number;
  ratioRange: [number, number];
}

export interface CapacityRun {
  markets: number;
  pollMs: number;
  requestedPerSec: number;
  achievedPerSec: number;
  relayCpuShare: number;
  simCpuShare: number;
  /** Achieved polls / relay CPU seconds: what one fully busy core would sustain. */
  pollsPerCoreSecond: number;
  failedPerSec: number;
}

export interface PollCapacityResult {
  cost: PollCostRun[];
  capacity: CapacityRun;
}

export async function runPollCapacity(options: BenchOptions): Promise<PollCapacityResult> {
  // 405 busy books need about 500 markets (some are expired, resolved or one-sided).
  const simMarkets = options.quick ? 500 : 800;
  const sim = await startSim(SIM_TICK_MS, simMarkets);
  try {
    const markets = sim.markets.slice(0, COST_MARKETS);
    const cost: PollCostRun[] = [];
    // As shipped (the figures the targets take), then changing books once more without the heap
    // flags, to show what V8's default heap sizing costs (docs/benchmarks.md "Poll capacity").
    // Traced right after the untraced run of the same books: the nearest a busy machine allows.
    const traced = options.otelSampleRatio;
    const runs: [BookActivity, RelayLaunch, number | undefined][] = [
      ['changing', 'shipped', undefined],
      ...(traced === undefined
        ? []
        : [['changing', 'shipped', traced] as [BookActivity, RelayLaunch, number]]),
      ['unchanged', 'shipped', undefined],
      ['changing', 'V8 defaults', undefined],
    ];
    for (const [books, launch, tracedAt] of runs) {
      if (books === 'unchanged') await sim.child.request('freeze');
      const run = { books, upstream: 'uncompressed' as const, launch, tracedAt };
      cost.push(await measureCost(sim, markets, run, options));
      if (books === 'unchanged') await sim.child.request('unfreeze');
    }
    const capacity = await measureCapacity(sim, options);
    cost.push(await measureCompressed(simMarkets, options));
    return { cost, capacity };
  } finally {
    await sim.child.stop();
  }
}

/** Changing books from an upstream that compresses: a simulator of its own, answering `br`. */
async function measureCompressed(simMarkets: number, options: BenchOptions): Promise<PollCostRun> {
  const sim = await startSim(SIM_TICK_MS, simMarkets, true);
  try {
    const run = { books: 'changing' as const, upstream: 'compressed' as const, launch: 'shipped' as const };
    return await measureCost(
      sim,
      sim.markets.slice(0, COST_MARKETS),
      { ...run, tracedAt: undefined },
      options,
    );
  } finally {
    await sim.child.stop();
  }
}

/** The relay polling `markets` books for one client subscribed to all of them, over one window. */
async function withRelay<T>(
  sim: Simulator,
  markets: readonly string[],
  relayOptions: {
    pollMs: number;
    upstreamRps?: number;
    profileName: string;
    launch: RelayLaunch;
    tracedAt?: number | undefined;
  },
  options: BenchOptions,
  measure: (relay: ServerUnderTest, generator: Child) => Promise<T>,
): Promise<T> {
  const { tracedAt } = relayOptions;
  const sink = tracedAt === undefined ? undefined : await startOtlpSink();
  const relay = await startServer('relay', {
    ...(sink === undefined || tracedAt === undefined
      ? {}
      : { otel: { endpoint: sink.url, sampleRatio: tracedAt } }),
    upstream: sim.url,
    pollMs: relayOptions.pollMs,
    upstreamConcurrency: UPSTREAM_CONNECTIONS,
    ...(relayOptions.upstreamRps === undefined ? {} : { upstreamRps: relayOptions.upstreamRps }),
    cpuProf: options.cpuProf,
    profileName: relayOptions.profileName,
    nodeFlags: relayOptions.launch === 'shipped' ? SHIPPED_RELAY_NODE_FLAGS : [],
  });
  const generator = await startGenerator();
  try {
    await generator.request('connect', {
      kind: 'relay',
      url: relay.url,
      groups: [{ label: 'books', count: 1, channel: 'book', depth: 10, assign: 'all', markets }],
    });
    await generator.request('awaitFirst', { timeoutMs: 60_000 }, 90_000);
    await sleep(options.warmupMs);
    return await measure(relay, generator);
  } finally {
    await generator.stop();
    await relay.child.stop();
    if (sink !== undefined) progress(`  traced: ${sink.batches()} batches of spans received`);
    await sink?.close();
  }
}

interface CostRunKind {
  books: BookActivity;
  upstream: UpstreamForm;
  launch: RelayLaunch;
  tracedAt: number | undefined;
}

async function measureCost(
  sim: Simulator,
  markets: readonly string[],
  { books, upstream, launch, tracedAt }: CostRunKind,
  options: BenchOptions,
): Promise<PollCostRun> {
  const traced = tracedAt === undefined ? '' : `, traced at ${tracedAt}`;
  progress(
    `poll-capacity: ${markets.length} ${books} books every ${COST_POLL_MS} ms from upstream (${upstream}), relay (${launch}${traced}) and floor`,
  );
  return withRelay(
    sim,
    markets,
    {
      pollMs: COST_POLL_MS,
      profileName: `relay-poll-cost-${books}-${upstream}-${launch === 'shipped' ? 'shipped' : 'v8-defaults'}${tracedAt === undefined ? '' : '-traced'}`,
      launch,
      tracedAt,
    },
    options,
    async (server, generator) => {
      // The rate the relay is asked for, with the relay's cap on requests in flight: when a busy
      // simulator slows the answers, both fall behind alike.
      const ratePerSecond = (markets.length * 1000) / COST_POLL_MS;
      const floor = await forkChild('poll-floor', {
        nodeFlags: options.cpuProf ? profileFlags(`poll-floor-${books}`) : [],
      });
      try {
        await floor.request('start', {
          url: sim.url,
          markets,
          ratePerSecond,
          connections: UPSTREAM_CONNECTIONS,
          acceptEncoding: ACCEPT_ENCODING,
        });
        // The floor is a fresh process: until its HTTP path is compiled it costs up to twice its
        // steady figure, which would flatter the relay (warm since its first snapshots).
        await sleep(floorWarmupMs(options));
        // Relay and floor in the same windows: a shared machine's load then weighs on both alike.
        // Several windows, each a paired ratio; the median of them is the figure (the load moves).
        const sample = () =>
          Promise.all([
            server.child.request<UsageSample>('usage'),
            server.child.request<PollCounts>('polls'),
            floor.request<UsageSample>('usage'),
            floor.request<FloorCounts>('counts'),
            server.child.request<PollCounts>('pollDurationMs'),
          ]);
        const rounds: Round[] = [];
        await generator.request('reset');
        const writes = () => server.child.request<{ frames: number; writes: number }>('writes');
        const writesBefore = await writes();
        let before = await sample();
        for (let round = 0; round < roundsOf(options); round++) {
          await sleep(options.windowMs / 2);
          const after = await sample();
          rounds.push(roundBetween(before, after));
          progress(`  ${books}, window ${round + 1}: ${describeRound(rounds.at(-1)!)}`);
          before = after;
        }
        const writesAfter = await writes();
        const stats = await generator.request<{ groups: Record<string, { updates: number }> }>('stats');
        if (rounds.some((round) => round.relayFailures > 0)) progress('  relay: some book polls failed');
        if (rounds.some((round) => round.floorFailures > 0)) progress('  floor: some requests failed');
        const total = (pick: (round: Round) => number) => rounds.reduce((sum, round) => sum + pick(round), 0);
        const relayWallMs = total((round) => round.relay.wallMs);
        const floorWallMs = total((round) => round.floor.wallMs);
        const polls = total((round) => round.polls);
        const completed = total((round) => round.completed);
        const deliveries = Object.values(stats.groups).reduce((sum, group) => sum + group.updates, 0);
        const ratios = rounds.map((round) => round.ratio).sort((a, b) => a - b);
        return {
          books,
          upstream,
          launch,
          markets: markets.length,
          askedPerSec: ratePerSecond,
          tracedAt,
          pollsPerSec: (polls * 1000) / relayWallMs,
          relayCpuPerPollUs: total((round) => round.relay.cpuUs) / Math.max(1, polls),
          relayCpuShare: total((round) => round.relay.cpuUs) / 1000 / relayWallMs,
          deliveriesPerSec: (deliveries * 1000) / relayWallMs,
          framesPerWrite:
            (writesAfter.frames - writesBefore.frames) /
            Math.max(1, writesAfter.writes - writesBefore.writes),
          floorRequestsPerSec: (completed * 1000) / floorWallMs,
          floorCpuPerPollUs: total((round) => round.floor.cpuUs) / Math.max(1, completed),
          floorCpuShare: total((round) => round.floor.cpuUs) / 1000 / floorWallMs,
          floorRequestMs: total((round) => round.floorRequestMs) / Math.max(1, completed),
          relayPollMs: total((round) => round.relayPollMs) / Math.max(1, polls),
          floorCompressedShare: total((round) => round.compressed) / Math.max(1, completed),
          meanBodyBytes: total((round) => round.bodyBytes) / Math.max(1, completed),
          ratio: ratios[Math.floor(ratios.length / 2)]!,
          ratioRange: [ratios[0]!, ratios[ratios.length - 1]!],
        };
      } finally {
        await floor.request('stop');
        await floor.stop();
      }
    },
  );
}

function floorWarmupMs(options: BenchOptions): number {
  return options.quick ? options.warmupMs : 4 * options.warmupMs;
}

function roundsOf(options: BenchOptions): number {
  return options.quick ? 3 : 12;
}

async function measureCapacity(sim: Simulator, options: BenchOptions): Promise<CapacityRun> {
  const markets = sim.markets;
  const requestedPerSec = (markets.length * 1000) / CAPACITY_POLL_MS;
  progress(
    `poll-capacity: capacity, ${markets.length} changing books every ${CAPACITY_POLL_MS} ms (${requestedPerSec}/s asked)`,
  );
  return withRelay(
    sim,
    markets,
    {
      pollMs: CAPACITY_POLL_MS,
      upstreamRps: CAPACITY_RPS,
      profileName: 'relay-poll-capacity',
      launch: 'shipped',
    },
    options,
    async (server) => {
      const [start, simStart, pollsBefore] = await Promise.all([
        server.child.request<UsageSample>('usage'),
        sim.child.request<UsageSample>('usage'),
        server.child.request<PollCounts>('polls'),
      ]);
      await sleep(options.windowMs);
      const [end, simEnd, pollsAfter] = await Promise.all([
        server.child.request<UsageSample>('usage'),
        sim.child.request<UsageSample>('usage'),
        server.child.request<PollCounts>('polls'),
      ]);
      const usage = usageBetween(start, end);
      const achievedPerSec = (bookPolls(pollsBefore, pollsAfter, 'ok') * 1000) / usage.wallMs;
      return {
        markets: markets.length,
        pollMs: CAPACITY_POLL_MS,
        requestedPerSec,
        achievedPerSec,
        relayCpuShare: usage.cpuShare,
        simCpuShare: usageBetween(simStart, simEnd).cpuShare,
        pollsPerCoreSecond: achievedPerSec / usage.cpuShare,
        failedPerSec: (bookPolls(pollsBefore, pollsAfter, 'error') * 1000) / usage.wallMs,
      };
    },
  );
}
