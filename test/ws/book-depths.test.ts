/**
 * Book depths 1, 5, 10, 25, 50 and full (docs/protocol.md "`book` data", `depth`): each (market,
 * depth) its own checksummed stream, every depth of a market served by one order-book request per
 * poll, `"full"` the same stream as null, any other depth refused with the request's id, and the
 * compact encoding, SSE and `GET /v1/book` carrying every depth.
 */
import { describe, expect, it } from 'vitest';
import { type BookState, bookChecksum } from '../../packages/protocol/src/protocol/book.ts';
import { COMPACT_SUBPROTOCOL } from '../../packages/protocol/src/protocol/compact.ts';
import { type BookDepth, bookDepths } from '../../packages/protocol/src/protocol/messages.ts';
import { ProtocolClient } from '../support/clients/protocol-client.ts';
import { SseClient } from '../support/clients/sse-client.ts';
import { expectedBook, type Harness, upstreamBook, useHarness } from '../support/harness.ts';
import { waitFor } from '../support/wait-for.ts';

describe('book depths', () => {
  let harness: Harness;
  const { opened, start } = useHarness();

  async function connect(protocols: string[] = []): Promise<ProtocolClient> {
    const client = await ProtocolClient.connect(harness.relay.url, {}, protocols);
    opened.push(client);
    return client;
  }

  /** Waits until the client's book of `market` at `depth` equals upstream's current book cut to it. */
  async function expectUpstream(
    view: (depth: BookDepth) => { state: unknown } | undefined,
    market: string,
    depth: BookDepth,
  ): Promise<void> {
    const expected = JSON.stringify(expectedBook(await upstreamBook(harness.sim, market), depth));
    await waitFor(`depth ${depth} of ${market} equal to upstream`, () =>
      JSON.stringify(view(depth)?.state) === expected ? true : undefined,
    );
  }

  it('serves depths 1, 5, 25 and full from one order-book request per market per poll, each checksummed', async () => {
    harness = await start({ sim: { markets: 2 } });
    const [market, other] = harness.sim.market.marketIds() as [string, string];
    const client = await connect();
    const held: BookDepth[] = [1, 5, 25, null];
    for (const depth of held) {
      const reply = await client.request({ op: 'subscribe', channel: 'book', markets: [market], depth });
      expect(reply).toMatchObject({ type: 'subscribed', channel: 'book', markets: [market], depth });
    }
    await waitFor('a snapshot on every depth', () =>
      held.every((depth) => client.view('book', market, depth)),
    );
    const book = (depth: BookDepth) => client.view('book', market, depth)!.state as BookState;
    for (const depth of held) expect(book(depth).bids.length).toBeLessThanOrEqual(depth ?? Infinity);
    // Top of book: the best level of each side, the same as the full book's first.
    expect(book(1)).toMatchObject({ bids: book(null).bids.slice(0, 1), asks: book(null).asks.slice(0, 1) });

    harness.sim.clearRequests();
    const rounds = 4;
    for (let round = 0; round < rounds; round++) {
      harness.sim.tick();
      for (const depth of held) await expectUpstream((d) => client.view('book', market, d), market, depth);
    }
    const orderBookReads = harness.sim.requests.filter((r) => r.path === '/clob/orderbook');
    // The relay's polls plus this test's own read per depth per round: a poll per depth would be four times more.
    const relayPolls = orderBookReads.length - rounds * held.length;
    const elapsedMs = harness.sim.requests.at(-1)!.at - harness.sim.requests[0]!.at;
    expect(relayPolls).toBeLessThanOrEqual(
      Math.ceil(elapsedMs / harness.relay.poller.intervals.bookIntervalMs) + 2,
    );
    expect(orderBookReads.every((r) => r.query.market_id === market)).toBe(true);
    expect(orderBookReads.some((r) => r.query.market_id === other)).toBe(false);
    expect(client.violations).toEqual([]);
    expect(client.of('error')).toEqual([]);
  });

  it('reads "full" as the null depth and answers any other depth bad_request with the id, nothing else changing', async () => {
    harness = await start({ sim: { markets: 1 }, relay: { tuning: { connection: { maxStreams: 2 } } } });
    const [market] = harness.sim.market.marketIds() as [string];
    const client = await connect();
    await client.request({ op: 'subscribe', channel: 'book', markets: [market], depth: null });
    await waitFor('the full book', () => client.view('book', market, null));
    // "full" names the same stream: subscribed again (depth null) with a fresh snapshot, adding no
    // stream, so the limit of two still has room for one. Its snapshot comes before the count starts.
    const full = await client.request({ op: 'subscribe', channel: 'book', markets: [market], depth: 'full' });
    expect(full).toMatchObject({ type: 'subscribed', markets: [market], depth: null });
    await waitFor('the fresh snapshot of the same stream', () => client.of('snapshot').length === 2);
    const before = client.messages.length;
    for (const depth of [7, 0, '10', 1000, 'FULL', -1, 2.5]) {
      const reply = await client.request({ op: 'subscribe', channel: 'book', markets: [market], depth });
      expect(reply, String(depth)).toMatchObject({ type: 'error', code: 'bad_request' });
      expect(reply.message, String(depth)).toBe(
        `depth: expected ${bookDepths.join(', ')}, "full" or null (the full book)`,
      );
    }
    expect(
      await client.request({ op: 'unsubscribe', channel: 'book', markets: [market], depth: 3 }),
    ).toMatchObject({
      type: 'error',
      code: 'bad_request',
    });
    // `orders` is the order list, not levels: no depth, not even "full".
    expect(
      await client.request({ op: 'subscribe', channel: 'orders', markets: [market], depth: 'full' }),
    ).toMatchObject({ type: 'error', code: 'bad_request' });
    expect(client.messages.slice(before).filter((m) => m.type !== 'error' && m.type !== 'update')).toEqual(
      [],
    );

    // Each depth counts against the stream limit: one more fits, the third is over.
    expect(
      await client.request({ op: 'subscribe', channel: 'book', markets: [market], depth: 1 }),
    ).toMatchObject({
      type: 'subscribed',
      depth: 1,
    });
    expect(
      await client.request({ op: 'subscribe', channel: 'book', markets: [market], depth: 5 }),
    ).toMatchObject({
      type: 'error',
      code: 'limit_exceeded',
    });
    const unsubscribed = await client.request({
      op: 'unsubscribe',
      channel: 'book',
      markets: [market],
      depth: 'full',
    });
    expect(unsubscribed).toMatchObject({ type: 'unsubscribed', depth: null });
    expect(client.violations).toEqual([]);
  });

  it('numbers every depth as a stream of its own on a compact connection', async () => {
    harness = await start({ sim: { markets: 1 } });
    const [market] = harness.sim.market.marketIds() as [string];
    const client = await connect([COMPACT_SUBPROTOCOL]);
    const depths: BookDepth[] = [...bookDepths, null];
    for (const depth of depths)
      await client.request({ op: 'subscribe', channel: 'book', markets: [market], depth });
    expect(new Set([...client.streamNumbers.values()].map((identity) => identity.depth))).toEqual(
      new Set(depths),
    );
    await waitFor('a snapshot on every depth', () =>
      depths.every((depth) => client.view('book', market, depth)),
    );
    harness.sim.tick();
    for (const depth of depths) await expectUpstream((d) => client.view('book', market, d), market, depth);
    expect(client.compactMessages).toBeGreaterThanOrEqual(depths.length);
    expect(client.violations).toEqual([]);
  });

  it('streams depth 1 and 25 over SSE and refuses an unknown depth', async () => {
    harness = await start({ sim: { markets: 1 } });
    const [market] = harness.sim.market.marketIds() as [string];
    for (const depth of [1, 25] as const) {
      const client = await SseClient.connect(
        `${harness.relay.url}/v1/sse?channel=book&depth=${depth}&markets=${market}`,
      );
      opened.push(client);
      await waitFor('the snapshot', () => client.view('book', market, depth));
      expect(client.messages[0]).toMatchObject({ type: 'subscribed', depth });
      harness.sim.tick();
      await expectUpstream((d) => client.view('book', market, d), market, depth);
      expect(client.violations).toEqual([]);
    }
    const refused = await fetch(`${harness.relay.url}/v1/sse?channel=book&depth=3&markets=${market}`);
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: 'bad_request' });
  });

  it('answers GET /v1/book at depth 1 and 25, and refuses another depth listing the offered ones', async () => {
    harness = await start({ sim: { markets: 1 } });
    const [market] = harness.sim.market.marketIds() as [string];
    for (const depth of [1, 25] as const) {
      const answer = await fetch(`${harness.relay.url}/v1/book/${market}?depth=${depth}`);
      expect(answer.status).toBe(200);
      const snapshot = (await answer.json()) as { depth: BookDepth; data: BookState; checksum: number };
      expect(snapshot.depth).toBe(depth);
      expect(snapshot.data).toEqual(expectedBook(await upstreamBook(harness.sim, market), depth));
      expect(snapshot.checksum).toBe(bookChecksum(snapshot.data));
    }
    const refused = await fetch(`${harness.relay.url}/v1/book/${market}?depth=7`);
    expect(refused.status).toBe(400);
    expect(JSON.stringify(await refused.json())).toContain('1, 5, 10, 25, 50 or full');
  });
});
