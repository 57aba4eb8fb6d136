/**
 * @module bench/upstream-signals
 * `node --import tsx bench/upstream-signals.ts [--seconds N]`: the long runs of the slow and the
 * rate-limited upstream (docs/scheduler.md "Rate limits", docs/operations.md "Freshness"), which the
 * tests check over a few seconds. A relay with 1 s polls (the defaults otherwise) and one client
 * subscribed to every channel of three markets:
 *
 * 1. every simulator answer 2 s late for N seconds (default 60): how many `stale` statuses;
 * 2. a third of the answers 429 `Retry-After: 1` for N seconds: requests per second against what
 *    the polls schedule, the shortest gap between two requests for one target (apart from after a
 *    429), the relay's lowered rate, and stale statuses.
 */
import pino from 'pino';
import WebSocket from 'ws';
import { startRelay } from '../src/relay-server.ts';
import type { SimRequestLogEntry } from '../src/sim/admin.ts';
import { startSimulator } from '../src/sim/server.ts';

const secondsArg = process.argv.indexOf('--seconds');
const SECONDS = secondsArg === -1 ? 60 : Number(process.argv[secondsArg + 1]);
const POLL_MS = 1_000;

const sim = await startSimulator({ markets: 8, seed: 7, tickMs: 250 });
const relay = await startRelay(
  {
    port: 0,
    host: '127.0.0.1',
    upstream: sim.url,
    bookPollMs: POLL_MS,
    pricePollMs: POLL_MS,
    upstreamConcurrency: 16,
    upstreamRps: 50,
    logLevel: 'silent',
    simMarkets: 8,
    simSeed: 7,
  },
  pino({ level: 'silent' }),
);
const markets = sim.market.activeMarketIds().slice(0, 3);
const feed = sim.market.tokens[0]!.oracleFeedId;
const statuses: { at: number; channel: string; state: string; reason?: string }[] = [];
const socket = new WebSocket(`${relay.url.replace('http', 'ws')}/v1/ws`);
await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
socket.on('message', (data) => {
  const message = JSON.parse(String(data)) as {
    type: string;
    channel: string;
    state: string;
    reason?: string;
  };
  if (message.type === 'status') statuses.push({ at: Date.now(), ...message });
});
const subscriptions: [string, string[]][] = [
  ['book', markets],
  ['price', markets],
  ['trades', markets],
  ['market', markets],
  ['orders', markets],
  ['probabilities', ['all']],
  ['oracle', [feed]],
];
for (const [channel, ids] of subscriptions)
  socket.send(JSON.stringify({ op: 'subscribe', channel, markets: ids }));
// 3 books (orders share them), 1 price batch, 3 trades, 3 market records, the map, 1 feed.
const TARGETS = 12;
await sleep(3_000);

async function phase(name: string, faults: Parameters<typeof sim.setFaults>[0]) {
  sim.setFaults(faults);
  sim.clearRequests();
  const since = Date.now();
  const staleBefore = statuses.length;
  let lowestLimit: number | null = null;
  const watch = setInterval(async () => {
    const health = (await (await fetch(`${relay.url}/health`)).json()) as {
      upstream: { rateLimited: { limitRps: number | null } };
    };
    const limit = health.upstream.rateLimited.limitRps;
    if (limit !== null) lowestLimit = Math.min(lowestLimit ?? limit, limit);
  }, 500);
  await sleep(SECONDS * 1000);
  clearInterval(watch);
  const requests = sim.requests.filter((request) => request.path !== '/health');
  const elapsedS = (Date.now() - since) / 1000;
  const stale = statuses.slice(staleBefore).filter((status) => status.state === 'stale');
  console.log(
    JSON.stringify({
      phase: name,
      seconds: Math.round(elapsedS),
      staleStatuses: stale.length,
      staleChannels: [...new Set(stale.map((status) => `${status.channel}: ${status.reason}`))],
      requestsPerSecond: round(requests.length / elapsedS),
      scheduledPerSecond: TARGETS / (POLL_MS / 1000),
      answered429: requests.filter((request) => request.status === 429).length,
      shortestGapMs: shortestGap(requests),
      lowestLimitRps: lowestLimit,
    }),
  );
  sim.setFaults({ latencyMs: 0, rateLimitRate: 0 });
}

/** The shortest time between two requests for one target, not counting those right after a 429. */
function shortestGap(requests: SimRequestLogEntry[]): number | null {
  const last = new Map<string, SimRequestLogEntry>();
  let shortest: number | null = null;
  for (const request of requests) {
    // A trades poll's later pages belong to the same poll as its first.
    if (request.query.offset !== undefined && request.query.offset !== '0') continue;
    const key = `${request.method} ${request.path} ${request.query.market_id ?? ''} ${JSON.stringify(request.body ?? '')}`;
    const before = last.get(key);
    last.set(key, request);
    if (before === undefined || before.status === 429) continue;
    shortest = Math.min(shortest ?? Number.POSITIVE_INFINITY, request.at - before.at);
  }
  return shortest;
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

await phase('every answer 2 s late', { latencyMs: 2_000 });
await phase('a third of answers 429 Retry-After: 1', { rateLimitRate: 1 / 3 });
socket.close();
await relay.close();
await sim.close();
