/**
 * @module bench/poll-age
 * `node --import tsx bench/poll-age.ts [--v8-defaults] [--minutes N]`: CPU per changed book poll of
 * one relay as it ages (docs/benchmarks.md section 11, "a relay running for minutes"). The relay
 * child polls 300 simulator books every second for one client at depth 10, as in the poll-capacity
 * scenario, but alone (no floor) and for minutes: one line per minute of its CPU per book poll.
 * Launched as shipped unless `--v8-defaults`.
 */
import { parseArgs } from 'node:util';
import { killAllChildren } from './lib/ipc.ts';
import { progress, sleep } from './lib/progress.ts';
import { fixed } from './lib/report.ts';
import { SHIPPED_RELAY_NODE_FLAGS, startGenerator, startServer, startSim } from './lib/servers.ts';
import { type UsageSample, usageBetween } from './lib/usage.ts';

process.on('exit', () => killAllChildren());

const { values } = parseArgs({
  options: { 'v8-defaults': { type: 'boolean', default: false }, minutes: { type: 'string', default: '4' } },
});
const minutes = Number(values.minutes);
const MARKETS = 300;

const sim = await startSim(100, 800);
const relay = await startServer('relay', {
  upstream: sim.url,
  pollMs: 1000,
  upstreamConcurrency: 64,
  nodeFlags: values['v8-defaults'] ? [] : SHIPPED_RELAY_NODE_FLAGS,
});
const generator = await startGenerator();
await generator.request('connect', {
  kind: 'relay',
  url: relay.url,
  groups: [
    {
      label: 'books',
      count: 1,
      channel: 'book',
      depth: 10,
      assign: 'all',
      markets: sim.markets.slice(0, MARKETS),
    },
  ],
});
await generator.request('awaitFirst', { timeoutMs: 60_000 }, 90_000);
const sample = () =>
  Promise.all([
    relay.child.request<UsageSample>('usage'),
    relay.child.request<Record<string, number>>('polls'),
  ]);
progress(
  `relay launched ${values['v8-defaults'] ? 'with V8 defaults' : 'as shipped'}, ${MARKETS} changing books a second`,
);
let [usageBefore, pollsBefore] = await sample();
for (let minute = 1; minute <= minutes; minute++) {
  await sleep(60_000);
  const [usage, polls] = await sample();
  const done = (polls['book:ok'] ?? 0) - (pollsBefore['book:ok'] ?? 0);
  const cpu = usageBetween(usageBefore, usage);
  progress(
    `minute ${minute}: ${fixed(cpu.cpuUs / Math.max(1, done), 0)} µs per book poll (${done} polls), RSS ${fixed(usage.rss / 2 ** 20, 0)} MB`,
  );
  [usageBefore, pollsBefore] = [usage, polls];
}
await generator.stop();
await relay.child.stop();
await sim.child.stop();
