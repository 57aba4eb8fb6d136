/**
 * @module bench/poll-age
 * `node --import tsx bench/poll-age.ts [--v8-defaults] [--minutes N]`: CPU per changed book poll of
 * one relay as it ages (docs/benchmarks.md section 11, "a relay running for minutes"). The relay
 * child polls 300 simulator books every second for one client at depth 10, as in the poll-capacity
 * scenario, with the floor (bench/children/poll-floor.ts) beside it all along, for minutes: one line
 * per minute of the relay's and the floor's CPU per book poll, and their ratio. Launched as shipped
 * unless `--v8-defaults`.
 */
import { parseArgs } from 'node:util';
import { forkChild, killAllChildren } from './lib/ipc.ts';
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
// The floor beside it all the time, at the rate the relay is asked for (as in poll-capacity).
const floor = await forkChild('poll-floor');
await floor.request('start', {
  url: sim.url,
  markets: sim.markets.slice(0, MARKETS),
  ratePerSecond: MARKETS,
  connections: 64,
});
const sample = () =>
  Promise.all([
    relay.child.request<UsageSample>('usage'),
    relay.child.request<Record<string, number>>('polls'),
    floor.request<UsageSample>('usage'),
    floor.request<{ completed: number }>('counts'),
  ]);
progress(
  `relay launched ${values['v8-defaults'] ? 'with V8 defaults' : 'as shipped'}, ${MARKETS} changing books a second`,
);
let [usageBefore, pollsBefore, floorBefore, floorCountsBefore] = await sample();
for (let minute = 1; minute <= minutes; minute++) {
  await sleep(60_000);
  const [usage, polls, floorUsage, floorCounts] = await sample();
  const done = (polls['book:ok'] ?? 0) - (pollsBefore['book:ok'] ?? 0);
  const relayUs = usageBetween(usageBefore, usage).cpuUs / Math.max(1, done);
  const floorDone = floorCounts.completed - floorCountsBefore.completed;
  const floorUs = usageBetween(floorBefore, floorUsage).cpuUs / Math.max(1, floorDone);
  progress(
    `minute ${minute}: relay ${fixed(relayUs, 0)} µs per book poll (${done} polls), floor ${fixed(floorUs, 0)} µs, ${fixed(relayUs / floorUs, 2)}x, relay RSS ${fixed(usage.rss / 2 ** 20, 0)} MB`,
  );
  [usageBefore, pollsBefore, floorBefore, floorCountsBefore] = [usage, polls, floorUsage, floorCounts];
}
await floor.request('stop');
await floor.stop();
await generator.stop();
await relay.child.stop();
await sim.child.stop();
