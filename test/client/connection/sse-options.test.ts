/**
 * The SDK over SSE takes every option the relay's SSE takes as a query parameter (docs/client.md
 * "Without WebSocket"): a book paced by `interval: 1000`, a price gated by `threshold` and trades
 * `since` a time reach the same states over SSE as over the WebSocket (books checksum-verified, no
 * resync), the relay pacing and gating each SSE subscriber as asked; a stream subscribed again with
 * other options moves to the response of those; the browser entry's own fallback to SSE keeps the
 * options; `update` and `list`, which SSE cannot carry, throw at the call.
 */
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it, vi } from 'vitest';
import { connect as connectInBrowser } from '../../../packages/client/src/index.ts';
import type { ConnectOptions } from '../../../packages/client/src/node.ts';
import type { Relay } from '../../../src/relay-server.ts';
import { useHarness } from '../../support/harness.ts';
import { waitFor } from '../../support/wait-for.ts';
import {
  connectRecorded,
  expectBooksEqualUpstream,
  expectPricesEqualUpstream,
  recordResyncs,
  tickAndPublish,
} from '../sdk-support.ts';

const MINUTE = 60_000;
const transports: [string, ConnectOptions][] = [
  ['WebSocket', { encoding: 'json' }],
  ['SSE', { transport: 'sse' }],
];

/** Each subscriber's (interval, threshold) at the relay on one stream, in no particular order. */
function pacesAt(relay: Relay, key: Parameters<Relay['registry']['get']>[0]): string[] {
  const stream = relay.registry.get(key);
  if (stream === undefined) return [];
  const { subscribers } = stream;
  return [...subscribers].map((s) => `${subscribers.intervalOf(s)}/${subscribers.thresholdOf(s)}`).sort();
}

describe('client SDK over SSE: every option', () => {
  const { opened, start } = useHarness();

  it('gets the same states as over the WebSocket with interval, threshold and since', async () => {
    const harness = await start({
      sim: { markets: 2, tradeFlow: () => undefined },
      relay: { pricePollMs: 100, tuning: { staleAfterFactor: 50 } },
    });
    const [market] = harness.sim.market.activeMarketIds() as [string];
    harness.sim.market.printTrades(market, 60);
    const since = new Date(Date.now() - 30 * MINUTE);
    const sides = transports.map(([name, options]) => {
      const { client, errors } = connectRecorded(harness.relay.url, options);
      opened.push(client);
      const full = client.subscribeBook(market);
      const paced = client.subscribeBook(market, { depth: 10, interval: 1_000 });
      const price = client.subscribePrice(market, { threshold: '0.01' });
      const trades = client.subscribeTrades(market, { since });
      const announced: string[] = [];
      trades.on('trade', (trade) => announced.push(trade.activity_id));
      return { name, errors, full, paced, price, trades, announced, resyncs: recordResyncs([full, paced]) };
    });
    const books = sides.flatMap((side) => [side.full, side.paced]);
    await expectBooksEqualUpstream(harness.sim, books);
    // The relay paces and gates the SSE subscriber as the WebSocket one.
    expect(pacesAt(harness.relay, { channel: 'book', market, depth: 10 })).toEqual([
      '1000/undefined',
      '1000/undefined',
    ]);
    expect(pacesAt(harness.relay, { channel: 'price', market })).toEqual([
      'undefined/0.01',
      'undefined/0.01',
    ]);

    for (let round = 0; round < 3; round++) await tickAndPublish(harness.sim, harness.relay, market);
    harness.sim.market.printTrades(market, 10);
    await expectBooksEqualUpstream(harness.sim, books);
    await expectPricesEqualUpstream(
      harness.sim,
      sides.map((side) => side.price),
    );
    const log = harness.sim.market.market(market)!.trades;
    const expected = log.filter((trade) => trade.at >= since.getTime()).map((trade) => trade.id);
    for (const side of sides)
      await waitFor(`${side.name}: every trade since then`, () =>
        isDeepStrictEqual(side.announced, expected) ? true : undefined,
      );

    const [overWebSocket, overSse] = sides as [(typeof sides)[0], (typeof sides)[0]];
    expect(overSse.paced.state).toEqual(overWebSocket.paced.state);
    expect(overSse.price.state).toEqual(overWebSocket.price.state);
    expect(overSse.trades.state).toEqual(overWebSocket.trades.state);
    expect(expected.length).toBeGreaterThan(60);
    for (const side of sides) {
      expect(side.resyncs, side.name).toEqual([]);
      expect(side.errors, side.name).toEqual([]);
    }
  });

  it('moves a stream subscribed again with other options to their response', async () => {
    const harness = await start({ sim: { markets: 2 }, relay: { tuning: { staleAfterFactor: 50 } } });
    const [market] = harness.sim.market.activeMarketIds() as [string];
    const { client, errors } = connectRecorded(harness.relay.url, { transport: 'sse' });
    opened.push(client);
    const book = client.subscribeBook(market, { depth: 10, interval: 1_000 });
    await expectBooksEqualUpstream(harness.sim, [book]);
    expect(client.subscribeBook(market, { depth: 10, interval: 200 })).toBe(book);
    const key = { channel: 'book', market, depth: 10 } as const;
    await waitFor('the relay to pace the book at 200 ms only', () =>
      isDeepStrictEqual(pacesAt(harness.relay, key), ['200/undefined']) ? true : undefined,
    );
    await waitFor('one response left', () => harness.relay.sse.connections.size === 1);
    await expectBooksEqualUpstream(harness.sim, [book]);
    expect(errors).toEqual([]);
  });

  it('keeps the options when the browser entry falls back to SSE by itself', async () => {
    const harness = await start({ sim: { markets: 2 } });
    const [market] = harness.sim.market.activeMarketIds() as [string];
    vi.stubGlobal('WebSocket', undefined);
    try {
      const client = connectInBrowser(harness.relay.url);
      opened.push(client);
      const price = client.subscribePrice(market, { interval: 1_000, threshold: '0.02' });
      await waitFor('the first price', () => price.state);
      expect(harness.relay.sse.connections.size).toBe(1);
      expect(pacesAt(harness.relay, { channel: 'price', market })).toEqual(['1000/0.02']);
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it('throws at the call on the requests SSE cannot carry', async () => {
    const harness = await start({ sim: { markets: 1 } });
    const [market] = harness.sim.market.activeMarketIds() as [string];
    const { client, errors } = connectRecorded(harness.relay.url, { transport: 'sse' });
    opened.push(client);
    const book = client.subscribeBook(market, { depth: 10 });
    const price = client.subscribePrice(market);
    await expectBooksEqualUpstream(harness.sim, [book]);
    expect(() => book.update({ depth: 50 })).toThrow(TypeError);
    expect(() => price.update({ interval: 1_000 })).toThrow(/needs a WebSocket/);
    expect(() => client.subscriptions()).toThrow(TypeError);
    expect(book.depth).toBe(10);
    expect(errors).toEqual([]);
  });
});
