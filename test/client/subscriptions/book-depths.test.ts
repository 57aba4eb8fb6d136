/**
 * The SDK's book depths (docs/client.md `subscribeBook`): 1, 5, 10, 25, 50 and `'full'` (the same
 * stream as null) stay equal to upstream over each transport, each checksum-verified with no
 * resync, and a depth the relay would refuse throws before anything is sent.
 */
import { describe, expect, it } from 'vitest';
import type { BookDepth, BookSubscription, ConnectOptions } from '../../../packages/client/src/node.ts';
import { useHarness } from '../../support/harness.ts';
import { connectRecorded, expectBooksEqualUpstream, recordResyncs, tickAndPublish } from '../sdk-support.ts';

const transports: [string, ConnectOptions][] = [
  ['compact WebSocket', {}],
  ['JSON WebSocket', { encoding: 'json' }],
  ['SSE', { transport: 'sse' }],
];

describe('client SDK: book depths', () => {
  const { opened, start } = useHarness();

  it.each(transports)('every depth equal to upstream over %s', async (_name, options) => {
    const harness = await start({ sim: { markets: 1 }, relay: { tuning: { staleAfterFactor: 50 } } });
    const [market] = harness.sim.market.marketIds() as [string];
    const { client, errors } = connectRecorded(harness.relay.url, options);
    opened.push(client);
    const full = client.subscribeBook(market, { depth: 'full' });
    expect(client.subscribeBook(market)).toBe(full);
    expect(client.subscribeBook(market, { depth: null })).toBe(full);
    expect(full.depth).toBeNull();
    const depths: BookDepth[] = [1, 5, 10, 25, 50];
    const books: BookSubscription[] = [
      full,
      ...depths.map((depth) => client.subscribeBook(market, { depth })),
    ];
    const resyncs = recordResyncs(books);
    await expectBooksEqualUpstream(harness.sim, books);
    for (let round = 0; round < 2; round++) {
      await tickAndPublish(harness.sim, harness.relay, market);
      await expectBooksEqualUpstream(harness.sim, books);
    }
    expect(books.find((book) => book.depth === 1)!.state!.bids.length).toBeLessThanOrEqual(1);
    expect(resyncs).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('throws on a depth the relay does not offer', async () => {
    const harness = await start({ sim: { markets: 1 } });
    const [market] = harness.sim.market.marketIds() as [string];
    const { client } = connectRecorded(harness.relay.url);
    opened.push(client);
    for (const depth of [7, 0, '10', 1000]) {
      expect(() => client.subscribeBook(market, { depth: depth as BookDepth }), String(depth)).toThrow(
        /depth must be 1, 5, 10, 25, 50, 'full' or null/,
      );
    }
    expect(client.streams).toHaveLength(0);
  });
});
