/**
 * @module bench/scenarios/freshness
 * Freshness per request: the simulator with 1,000 markets of skewed activity (10 hot markets
 * changing about 4 times a second, the rest about once a minute; it reports every change), a
 * budget of 50 upstream requests a second, one client subscribed to every book. For each upstream
 * change, the time until the client received a state at least that new; p50 and p99, for the
 * freshness scheduler and for round-robin in the same run, and the oldest confirmation any book
 * reached (against the maximum age). In-process: relay, simulator and client share one process,
 * alike for both schedulers.
 */

import { once } from 'node:events';
import pino from 'pino';
import WebSocket from 'ws';
import { defaultGroupLimits } from '../../src/relay/admission/group-streams.ts';
import type { SchedulerMode } from '../../src/relay/poll/scheduler.ts';
import { startRelay } from '../../src/relay-server.ts';
import { skewedActivity } from '../../src/sim/market-simulation.ts';
import { startSimulator } from '../../src/sim/server.ts';
import type { BenchOptions } from '../lib/options.ts';
import { progress, sleep } from '../lib/progress.ts';

const MARKETS = 1_000;
const HOT_MARKETS = 10;
const UPSTREAM_RPS = 50;
const BOOK_POLL_MS = 250;
const MAX_AGE_MS = 60_000;
const SIM_TICK_MS = 100;

export interface FreshnessRun {
  scheduler: SchedulerMode;
  changes: number;
  /** Changes never received by the end of the window (counted at their age then). */
  unreceived: number;
  p50Ms: number;
  p99Ms: number;
  hotP50Ms: number;
  quietP50Ms: number;
  /** Oldest a book's confirmation grew before it was confirmed again. */
  oldestConfirmationMs: number;
  upstreamRequestsPerSec: number;
}

export interface FreshnessResult {
  markets: number;
  rps: number;
  maxAgeMs: number;
  windowS: number;
  runs: FreshnessRun[];
  ratios: { p50: number; p99: number };
}

export async function runFreshness(options: BenchOptions): Promise<FreshnessResult> {
  const windowMs = options.quick ? 45_000 : 120_000;
  const runs: FreshnessRun[] = [];
  for (const scheduler of ['round-robin', 'freshness'] as const) {
    progress(`freshness: ${MARKETS} markets, ${UPSTREAM_RPS} req/s, ${scheduler}`);
    runs.push(await runOne(scheduler, windowMs));
  }
  const [roundRobin, freshness] = runs as [FreshnessRun, FreshnessRun];
  return {
    markets: MARKETS,
    rps: UPSTREAM_RPS,
    maxAgeMs: MAX_AGE_MS,
    windowS: windowMs / 1000,
    runs,
    ratios: { p50: freshness.p50Ms / roundRobin.p50Ms, p99: freshness.p99Ms / roundRobin.p99Ms },
  };
}

async function runOne(scheduler: SchedulerMode, windowMs: number): Promise<FreshnessRun> {
  const changes = new Map<string, number[]>();
  const sim = await startSimulator({
    markets: MARKETS,
    seed: 11,
    tickMs: SIM_TICK_MS,
    activity: skewedActivity(HOT_MARKETS),
    onChange: (market, at) => {
      const list = changes.get(market);
      if (list === undefined) changes.set(market, [at]);
      else list.push(at);
    },
    requestLogLimit: 1_000,
  });
  const relay = await startRelay(
    {
      port: 0,
      host: '127.0.0.1',
      upstream: sim.url,
      bookPollMs: BOOK_POLL_MS,
      pricePollMs: 1_000,
      upstreamConcurrency: 16,
      upstreamRps: UPSTREAM_RPS,
      scheduler,
      maxAgeMs: MAX_AGE_MS,
      // One client holds every market here: the per-connection caps are for many clients.
      isolation: {
        maxPrivateTargetsPerConnection: 10_000,
        maxPrivateTargetsPerKey: 10_000,
        newMarketsPerSecond: 10_000,
        newMarketsPerSecondPerKey: 10_000,
        lookupsPerSecond: 2,
        ...defaultGroupLimits,
        newStreamsPerSecondPerAddress: 10_000,
      },
      logLevel: 'silent',
      simMarkets: MARKETS,
      simSeed: 11,
    },
    pino({ level: 'silent' }),
  );
  const markets = sim.market.marketIds();
  const hot = new Set(markets.slice(0, HOT_MARKETS));
  /** market -> [upstream ts (ms), received at] of every snapshot and update. */
  const receipts = new Map<string, [number, number][]>();
  let oldestConfirmationMs = 0;
  let measuring = false;
  let refused = 0;
  relay.events.on('poll:confirmed', ({ kind, ageMs }) => {
    if (measuring && kind === 'book') oldestConfirmationMs = Math.max(oldestConfirmationMs, ageMs);
  });
  const ws = new WebSocket(`${relay.url.replace(/^http/, 'ws')}/v1/ws`);
  ws.on('message', (data) => {
    const receivedAt = Date.now();
    const message = JSON.parse(data.toString()) as { type: string; market?: string; ts?: string };
    if (message.type === 'error') refused += 1;
    if ((message.type !== 'snapshot' && message.type !== 'update') || message.market === undefined) return;
    const list = receipts.get(message.market) ?? [];
    list.push([Date.parse(message.ts ?? ''), receivedAt]);
    receipts.set(message.market, list);
  });
  try {
    await once(ws, 'open');
    for (let i = 0; i < markets.length; i += 100)
      ws.send(JSON.stringify({ op: 'subscribe', channel: 'book', markets: markets.slice(i, i + 100) }));
    // Every first snapshot (1,000 books at 45 a second), then one maximum age: the first polls all
    // come due for their maximum age together once, a start-up burst that is not the steady state.
    const settleMs = (MARKETS / (UPSTREAM_RPS * 0.9)) * 1000 + MAX_AGE_MS + 10_000;
    await sleep(settleMs);
    if (refused > 0 || receipts.size < MARKETS * 0.85)
      throw new Error(`freshness: ${refused} subscriptions refused, ${receipts.size} books received`);
    measuring = true;
    const from = Date.now();
    let requests = 0;
    const countRequest = () => {
      requests += 1;
    };
    relay.client.events.on('request', countRequest);
    await sleep(windowMs);
    const to = Date.now();
    measuring = false;
    relay.client.events.off('request', countRequest);
    const latencies: number[] = [];
    const hotLatencies: number[] = [];
    const quietLatencies: number[] = [];
    let unreceived = 0;
    for (const [market, times] of changes) {
      const seen = receipts.get(market) ?? [];
      let next = 0;
      for (const changedAt of times) {
        if (changedAt < from || changedAt >= to - 5_000) continue;
        while (next < seen.length && seen[next]![0] < changedAt) next++;
        const latency = next < seen.length ? seen[next]![1] - changedAt : to - changedAt;
        if (next >= seen.length) unreceived++;
        latencies.push(latency);
        (hot.has(market) ? hotLatencies : quietLatencies).push(latency);
      }
    }
    return {
      scheduler,
      changes: latencies.length,
      unreceived,
      p50Ms: percentile(latencies, 0.5),
      p99Ms: percentile(latencies, 0.99),
      hotP50Ms: percentile(hotLatencies, 0.5),
      quietP50Ms: percentile(quietLatencies, 0.5),
      oldestConfirmationMs,
      upstreamRequestsPerSec: (requests * 1000) / (to - from),
    };
  } finally {
    ws.close();
    await relay.close();
    await sim.close();
  }
}

function percentile(values: number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}
