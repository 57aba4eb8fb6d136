/**
 * @module bench/threshold-pace
 * `node --import tsx bench/threshold-pace.ts [--seconds 60] [--markets 4] [--walk]`: a `price`
 * `threshold` at the default poll intervals (docs/protocol.md "Per-subscription options"). One
 * relay as shipped (prices polled every 1 s) on the simulator (markets evolving every 250 ms, or
 * with `--walk` a fake upstream whose best bid moves by one tick of 0.01 up or down on every price
 * poll); a plain subscriber and one of `"threshold": "0.05"` on the same markets for `--seconds`;
 * then the markets stop. Prints each one's messages, the ratio, how many of the thresholded
 * messages were moves of the threshold and how many catch-ups, and how many polls after the stop
 * the thresholded subscriber held the plain one's state.
 */
import { parseArgs } from 'node:util';
import pino from 'pino';
import type { PriceData } from '../packages/protocol/src/protocol/messages.ts';
import { parseCommandLine } from '../src/config/config.ts';
import { thresholdMove } from '../src/relay/streams/threshold.ts';
import { startRelay } from '../src/relay-server.ts';
import { startSimulator } from '../src/sim/server.ts';
import { ProtocolClient } from '../test/support/clients/protocol-client.ts';
import { startScriptedPrices } from '../test/support/upstream/scripted-prices.ts';
import { waitFor } from '../test/support/wait-for.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    markets: { type: 'string', default: '4' },
    walk: { type: 'boolean', default: false },
  },
});
const seconds = Number(values.seconds);
const THRESHOLD = '0.05';
const BATCH = '/clob/market-prices/batch';

const sim = await startSimulator({ markets: 4 * Number(values.markets), seed: 11 });
// Priced markets quoted in 0.01: every 4th from 0 and from 2 (docs/upstream.md).
const markets = sim.market
  .marketIds()
  .filter((_, i) => i % 2 === 0)
  .slice(0, Number(values.markets));
const fake = values.walk ? await startScriptedPrices(sim.url) : undefined;
const bids = new Map(markets.map((market) => [market, 50]));
const quote = (cents: number): PriceData => ({
  best_bid: (cents / 100).toFixed(8),
  best_ask: ((cents + 2) / 100).toFixed(8),
  midpoint_price: ((cents + 1) / 100).toFixed(8),
});
for (const market of markets) fake?.set(market, quote(50));
const command = parseCommandLine(
  ['serve', '--port', '0', '--host', '127.0.0.1', '--upstream', fake?.url ?? sim.url],
  {},
);
if (command.command !== 'serve') throw new Error('expected a serve configuration');
const relay = await startRelay(command.config, pino({ level: 'silent' }));
const polls = () =>
  fake === undefined ? sim.requests.filter(({ path }) => path === BATCH).length : fake.batches;
// On the walk, each poll answered moves every market's bid a tick, up or down, kept within 0.30..0.70.
let walked = 0;
const walker = setInterval(() => {
  if (fake === undefined || fake.batches === walked) return;
  walked = fake.batches;
  for (const market of markets) {
    const was = bids.get(market)!;
    const next = was <= 30 ? was + 1 : was >= 70 ? was - 1 : was + (Math.random() < 0.5 ? -1 : 1);
    bids.set(market, next);
    fake.set(market, quote(next));
  }
}, 5);

const plain = await ProtocolClient.connect(relay.url);
const gated = await ProtocolClient.connect(relay.url);
await plain.request({ op: 'subscribe', channel: 'price', markets });
await gated.request({ op: 'subscribe', channel: 'price', markets, threshold: THRESHOLD });
const began = polls();
await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
const counted = (client: ProtocolClient) =>
  client.messages.filter(({ type }) => type === 'snapshot' || type === 'update').length - markets.length;
const during = { plain: counted(plain), gated: counted(gated), polls: polls() - began };

clearInterval(walker);
if (fake === undefined) sim.market.setBookChanging(false);
const stoppedAt = polls();
const state = (client: ProtocolClient, market: string) => JSON.stringify(client.view('price', market)?.state);
const settledAt = await waitFor(
  'the thresholded subscriber at the plain one’s state',
  () =>
    markets.every((m) => state(gated, m) === state(plain, m)) && polls() - stoppedAt > 1
      ? polls()
      : undefined,
  { timeoutMs: 60_000, everyMs: 20 },
);

let moves = 0;
let catchUps = 0;
for (const market of markets) {
  const received = gated.messages.filter(
    ({ type, market: of }) => of === market && (type === 'snapshot' || type === 'update'),
  );
  let held = received[0]!.data as PriceData;
  for (const message of received.slice(1)) {
    const next = { ...held, ...(message.data as PriceData) };
    if (thresholdMove(held, next, THRESHOLD) === 'moved') moves += 1;
    else catchUps += 1;
    held = next;
  }
}
console.log(
  JSON.stringify({
    upstream: fake === undefined ? 'simulator, 250 ms ticks' : 'one tick a poll',
    seconds,
    markets: markets.length,
    pricePolls: during.polls,
    plainMessages: during.plain,
    thresholdMessages: during.gated,
    ratio: Number((during.gated / during.plain).toFixed(3)),
    thresholdMessagesInAll: { moves, catchUps },
    pollsFromStopToSameState: settledAt - stoppedAt,
    violations: [...plain.violations, ...gated.violations],
  }),
);
await Promise.all([plain.close(), gated.close()]);
await relay.close();
await fake?.close();
await sim.close();
