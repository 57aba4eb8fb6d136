/**
 * @module bench/rest-shuffle
 * `node --import tsx bench/rest-shuffle.ts [--records 5000] [--seconds 20] [--poll-ms 250]`: a
 * pathological `rest` body against one relay (docs/operations.md "Memory", docs/protocol.md "`rest`
 * data"): a fake upstream serves one public path as a keyed list of N records in a new order on
 * every request, so every poll changes the whole list, while one client follows that stream and a
 * second one a simulator book beside it. The relay runs in this process: the event loop's delay
 * (perf_hooks, 10 ms resolution) is the relay's, and `/livez` is timed every 100 ms. Goals: `/livez`
 * within 100 ms and the loop's p99 delay under 100 ms. The fake upstream's bodies are made before
 * the run, so serving one costs a write.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import pino from 'pino';
import WebSocket from 'ws';
import { startRelay } from '../src/relay-server.ts';
import { startSimulator } from '../src/sim/server.ts';
import { startScriptedPath } from '../test/support/upstream/scripted-path.ts';
import { progress, sleep } from './lib/progress.ts';
import { fixed } from './lib/report.ts';

const { values } = parseArgs({
  options: {
    records: { type: 'string', default: '5000' },
    seconds: { type: 'string', default: '20' },
    'poll-ms': { type: 'string', default: '250' },
  },
});
const RECORDS = Number(values.records);
const SECONDS = Number(values.seconds);
const POLL_MS = Number(values['poll-ms']);
const PATH = '/api/rewards/leaderboard';

/** Bodies of the same records in different orders (a seeded shuffle each), served in turn. */
function shuffledBodies(count: number): string[] {
  const records = Array.from({ length: RECORDS }, (_, i) => ({
    user_id: `user-${i}`,
    username: `trader${i}`,
    points: String(10_000 - i),
    rank: i + 1,
  }));
  let seed = 7;
  return Array.from({ length: count }, () => {
    const list = [...records];
    for (let i = list.length - 1; i > 0; i--) {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      const j = seed % (i + 1);
      [list[i], list[j]] = [list[j]!, list[i]!];
    }
    return JSON.stringify({ success: true, leaderboard: list });
  });
}

function quantile(sorted: readonly number[], q: number): number {
  return sorted.length === 0
    ? Number.NaN
    : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

const bodies = shuffledBodies(16);
const sim = await startSimulator({ markets: 4, seed: 7, tickMs: 100 });
const fake = await startScriptedPath(sim.url, PATH, bodies[0]!);
let served = 0;
const relay = await startRelay(
  {
    port: 0,
    host: '127.0.0.1',
    upstream: fake.url,
    bookPollMs: POLL_MS,
    pricePollMs: POLL_MS,
    upstreamConcurrency: 16,
    upstreamRps: 1000,
    logLevel: 'silent',
    simMarkets: 4,
    simSeed: 7,
  },
  pino({ level: 'silent' }),
);
const rotate = setInterval(() => fake.serve(bodies[++served % bodies.length]!), POLL_MS / 2);

/** A client that counts what arrives without parsing it (its own cost stays out of the figures). */
function follow(subscribe: object): { messages: number; bytes: number; close(): void } {
  const ws = new WebSocket(`${relay.url.replace(/^http/, 'ws')}/v1/ws`);
  const seen = { messages: 0, bytes: 0, close: () => ws.close() };
  ws.on('open', () => ws.send(JSON.stringify(subscribe)));
  ws.on('message', (data: Buffer) => {
    seen.messages += 1;
    seen.bytes += data.length;
  });
  return seen;
}

const [market] = sim.market.activeMarketIds();
const restClient = follow({ op: 'subscribe', id: 1, channel: 'rest', paths: [PATH] });
const bookClient = follow({ op: 'subscribe', id: 1, channel: 'book', markets: [market], depth: 10 });
await sleep(2_000);

progress(`rest-shuffle: ${RECORDS} records shuffled on every poll (${POLL_MS} ms), ${SECONDS} s`);
const delay = monitorEventLoopDelay({ resolution: 10 });
const livez: number[] = [];
let livezFailures = 0;
const cpuBefore = process.cpuUsage();
const restBefore = { ...restClient };
const bookBefore = { ...bookClient };
const askedBefore = fake.asked;
delay.enable();
const deadline = Date.now() + SECONDS * 1_000;
while (Date.now() < deadline) {
  const started = performance.now();
  try {
    const response = await fetch(`${relay.url}/livez`, { signal: AbortSignal.timeout(5_000) });
    await response.arrayBuffer();
    if (!response.ok) livezFailures += 1;
  } catch {
    livezFailures += 1;
  }
  livez.push(performance.now() - started);
  await sleep(100);
}
delay.disable();
const cpu = process.cpuUsage(cpuBefore);
clearInterval(rotate);

const sortedLivez = [...livez].sort((a, b) => a - b);
const ms = (ns: number) => ns / 1e6;
console.log(
  [
    `records: ${RECORDS}, poll: ${POLL_MS} ms, window: ${SECONDS} s, polls of the path: ${fake.asked - askedBefore}`,
    `event-loop delay: p50 ${fixed(ms(delay.percentile(50)), 1)} ms, p99 ${fixed(ms(delay.percentile(99)), 1)} ms, max ${fixed(ms(delay.max), 1)} ms`,
    `/livez: p50 ${fixed(quantile(sortedLivez, 0.5), 1)} ms, p99 ${fixed(quantile(sortedLivez, 0.99), 1)} ms, max ${fixed(sortedLivez.at(-1) ?? Number.NaN, 1)} ms, failures ${livezFailures} of ${livez.length}`,
    `CPU: ${fixed((cpu.user + cpu.system) / 1e6 / SECONDS, 2)} cores`,
    `rest client: ${restClient.messages - restBefore.messages} messages, ${fixed((restClient.bytes - restBefore.bytes) / 1e6, 1)} MB`,
    `book client: ${bookClient.messages - bookBefore.messages} messages`,
  ].join('\n'),
);
restClient.close();
bookClient.close();
await relay.close();
await fake.close();
await sim.close();
