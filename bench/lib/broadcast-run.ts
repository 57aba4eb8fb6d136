/**
 * @module bench/lib/broadcast-run
 * One measured run of a fan-out scenario (1, 2, 7, 9, 12): a server (relay or baseline) and a fresh
 * load generator, N clients connected and subscribed, a warm-up, then a window during which the
 * server's CPU time (its own process.cpuUsage()) and every delivery and its latency are counted;
 * given the simulator, also the requests it served, its CPU time and the relay's polls.
 */

import type { ClientGroup, GroupCounts, ServerKind } from '../children/generator.ts';
import type { BroadcastPlan, PacingSample } from './baselines/baseline-frame.ts';
import { uwsBinary } from './baselines/uws.ts';
import type { PollCounts } from './book-polls.ts';
import type { Child } from './ipc.ts';
import type { LatencySummary } from './latency.ts';
import { progress, sleep } from './progress.ts';
import { type SdkCheck, type SdkCheckResult, type SdkStreams, startSdkCheck } from './sdk-check.ts';
import { type ServerOptions, serverLabels, startGenerator, startServer } from './servers.ts';
import { type UsageDelta, type UsageSample, usageBetween } from './usage.ts';

export interface RunMetrics {
  server: string;
  clients: number;
  connected: number;
  windowS: number;
  /** Stream messages received by all clients in the window. */
  deliveries: number;
  deliveriesPerSec: number;
  messagesPerClientPerSec: number;
  meanFrameBytes: number;
  serverCpuMs: number;
  cpuPerDeliveryUs: number;
  /** The kernel's part of `cpuPerDeliveryUs` (system CPU time). */
  kernelPerDeliveryUs: number;
  /** What the clients' sockets read in the window, all clients together. */
  socketBytes: number;
  /** Server CPU time over wall time (1 = one core). */
  serverCpuShare: number;
  serverEventLoopUtilisation: number;
  generatorCpuShare: number;
  latency: LatencySummary;
  /** The generator's counts of each client group, by label. */
  groups: Record<string, GroupCounts>;
  /** Relay runs: frames per socket write in the window (1 = no coalescing). */
  framesPerWrite?: number;
  /** Relay runs: what a client SDK subscriber riding along saw (resyncs must be 0). */
  sdk?: SdkCheckResult;
  /** Relay runs given the simulator: what upstream was asked in the window. */
  upstream?: UpstreamLoad;
  /** Baselines: topic-messages sent in the window against what their plan asked by the wall clock. */
  pacing?: PacingSample;
}

export interface UpstreamLoad {
  /** Requests the simulator served per second (polls, the catalogue, everything). */
  requestsPerSec: number;
  /** The relay's finished polls per second, by channel and outcome (`book:ok`, `rest:ok`, ...). */
  pollsPerSec: Record<string, number>;
  /** Their mean duration (request to parsed answer), ms, by the same names. */
  meanPollMs: Record<string, number>;
  /** The simulator's CPU time over wall time: what answering took of the shared machine. */
  simCpuShare: number;
}

export interface RunSpec {
  kind: ServerKind;
  clients: ClientGroup[];
  /** Baselines: what to broadcast (mimicking the relay's measured rate and frame size). */
  plan?: BroadcastPlan;
  server?: ServerOptions;
  warmupMs: number;
  windowMs: number;
  /** Relay runs: the streams an SDK subscriber checks during the run. */
  sdkCheck?: SdkStreams & { encoding?: 'compact' | 'json'; deflate?: boolean };
  /** Relay runs: the simulator the relay polls, to count what it is asked in the window. */
  upstream?: Child;
  /** Called with the server's URL before any client connects; throwing ends the run there. */
  beforeConnect?: (url: string) => Promise<void>;
}

interface GeneratorStats {
  groups: Record<string, GroupCounts>;
  latency: LatencySummary;
  usage: UsageDelta;
}

interface WriteTotals {
  frames: number;
  writes: number;
}

/** A baseline's pacing so far (the relay follows no plan). */
function pacing(server: Child, spec: RunSpec): Promise<PacingSample | undefined> {
  return spec.plan === undefined ? Promise.resolve(undefined) : server.request<PacingSample>('paced');
}

/** The relay's frames and socket writes so far (the baselines do not count theirs). */
function relayWrites(server: Child, kind: ServerKind): Promise<WriteTotals | undefined> {
  return kind === 'relay' ? server.request<WriteTotals>('writes') : Promise.resolve(undefined);
}

export async function measureBroadcast(spec: RunSpec): Promise<RunMetrics> {
  const total = spec.clients.reduce((sum, group) => sum + group.count, 0);
  const label = serverLabels[spec.kind];
  const server = await startServer(spec.kind, spec.server);
  const generator = await startGenerator();
  let sdk: SdkCheck | undefined;
  try {
    await spec.beforeConnect?.(server.url);
    progress(`  ${label}: connecting ${total} clients`);
    // Up to 30 ms a connection on a loaded machine.
    const { connected } = await generator.request<{ connected: number }>(
      'connect',
      { kind: spec.kind, url: server.url, groups: spec.clients },
      Math.max(120_000, total * 30),
    );
    if (spec.kind === 'relay') await generator.request('awaitFirst', { timeoutMs: 30_000 }, 60_000);
    sdk =
      spec.sdkCheck === undefined
        ? undefined
        : startSdkCheck(server.url, spec.sdkCheck, spec.sdkCheck.encoding, spec.sdkCheck.deflate);
    if (spec.plan !== undefined) await server.child.request('start', spec.plan);
    await sleep(spec.warmupMs);
    progress(`  ${label}: measuring ${spec.windowMs / 1000} s`);
    const upstream = spec.kind === 'relay' ? spec.upstream : undefined;
    const [start, , writesBefore, upstreamBefore, pacedBefore] = await Promise.all([
      server.child.request<UsageSample>('usage'),
      generator.request('reset'),
      relayWrites(server.child, spec.kind),
      upstream === undefined ? undefined : upstreamSample(server.child, upstream, true),
      pacing(server.child, spec),
    ]);
    await sleep(spec.windowMs);
    const [end, stats, writesAfter, upstreamAfter, pacedAfter] = await Promise.all([
      server.child.request<UsageSample>('usage'),
      generator.request<GeneratorStats>('stats'),
      relayWrites(server.child, spec.kind),
      upstream === undefined ? undefined : upstreamSample(server.child, upstream, false),
      pacing(server.child, spec),
    ]);
    const usage = usageBetween(start, end);
    const counts = Object.values(stats.groups);
    const deliveries = counts.reduce((sum, group) => sum + group.updates, 0);
    const bytes = counts.reduce((sum, group) => sum + group.updateBytes, 0);
    const windowS = usage.wallMs / 1000;
    return {
      server: label,
      clients: total,
      connected,
      windowS,
      deliveries,
      deliveriesPerSec: deliveries / windowS,
      messagesPerClientPerSec: deliveries / windowS / connected,
      meanFrameBytes: deliveries > 0 && bytes > 0 ? bytes / deliveries : (spec.plan?.frameBytes ?? 0),
      serverCpuMs: usage.cpuUs / 1000,
      cpuPerDeliveryUs: usage.cpuUs / Math.max(1, deliveries),
      kernelPerDeliveryUs: usage.systemUs / Math.max(1, deliveries),
      socketBytes: counts.reduce((sum, group) => sum + group.socketBytes, 0),
      serverCpuShare: usage.cpuShare,
      serverEventLoopUtilisation: usage.eventLoopUtilisation,
      generatorCpuShare: stats.usage.cpuShare,
      latency: stats.latency,
      groups: stats.groups,
      ...(writesBefore === undefined || writesAfter === undefined
        ? {}
        : {
            framesPerWrite:
              (writesAfter.frames - writesBefore.frames) /
              Math.max(1, writesAfter.writes - writesBefore.writes),
          }),
      ...(sdk === undefined ? {} : { sdk: sdk.result() }),
      ...(upstreamBefore === undefined || upstreamAfter === undefined
        ? {}
        : { upstream: upstreamLoad(upstreamBefore, upstreamAfter, usage.wallMs / 1000) }),
      ...(pacedBefore === undefined || pacedAfter === undefined
        ? {}
        : {
            pacing: {
              sent: pacedAfter.sent - pacedBefore.sent,
              asked: pacedAfter.asked - pacedBefore.asked,
            },
          }),
    };
  } finally {
    await sdk?.close();
    await generator.stop();
    await server.child.stop();
  }
}

interface UpstreamSample {
  polls: PollCounts;
  pollMs: PollCounts;
  simUsage: UsageSample;
  /** Requests the simulator served since the window started (its log is cleared then). */
  served: number;
}

async function upstreamSample(relay: Child, sim: Child, starting: boolean): Promise<UpstreamSample> {
  const [polls, pollMs, simUsage, served] = await Promise.all([
    relay.request<PollCounts>('polls'),
    relay.request<PollCounts>('pollDurationMs'),
    sim.request<UsageSample>('usage'),
    starting
      ? sim.request('clearRequests').then(() => 0)
      : sim.request<{ total: number }>('requests').then((log) => log.total),
  ]);
  return { polls, pollMs, simUsage, served };
}

function upstreamLoad(before: UpstreamSample, after: UpstreamSample, windowS: number): UpstreamLoad {
  const pollsPerSec: Record<string, number> = {};
  const meanPollMs: Record<string, number> = {};
  for (const [name, count] of Object.entries(after.polls)) {
    const polls = count - (before.polls[name] ?? 0);
    if (polls <= 0) continue;
    pollsPerSec[name] = polls / windowS;
    meanPollMs[name] = ((after.pollMs[name] ?? 0) - (before.pollMs[name] ?? 0)) / polls;
  }
  return {
    requestsPerSec: after.served / windowS,
    pollsPerSec,
    meanPollMs,
    simCpuShare: usageBetween(before.simUsage, after.simUsage).cpuShare,
  };
}

/** The `ws` and socket.io baselines of a scenario, one after the other, on the same clients and plan. */
export async function measureBaselines(
  clients: ClientGroup,
  plan: BroadcastPlan,
  timing: { warmupMs: number; windowMs: number },
): Promise<{ ws: RunMetrics; socketIo: RunMetrics }> {
  const ws = await measureBroadcast({ kind: 'ws', clients: [clients], plan, ...timing });
  const socketIo = await measureBroadcast({ kind: 'socketio', clients: [clients], plan, ...timing });
  return { ws, socketIo };
}

/**
 * The native anchors on the same clients and plan: uWebSockets.js's C++ pub/sub (left out, with the
 * reason, where it is not installed or has no binary for this Node) and the floor (one prebuilt
 * frame, one socket write per delivery).
 */
export async function measureNativeAnchors(
  clients: ClientGroup,
  plan: BroadcastPlan,
  timing: { warmupMs: number; windowMs: number },
): Promise<NativeAnchors> {
  const binary = uwsBinary();
  if ('missing' in binary) progress(`  ${binary.missing}: its row is left out`);
  const uws =
    'missing' in binary
      ? { uwsMissing: binary.missing }
      : { uws: await measureBroadcast({ kind: 'uws', clients: [clients], plan, ...timing }) };
  const floor = await measureBroadcast({ kind: 'floor', clients: [clients], plan, ...timing });
  return { ...uws, floor };
}

export interface NativeAnchors {
  floor: RunMetrics;
  uws?: RunMetrics;
  /** Why there is no uWS row. */
  uwsMissing?: string;
}
