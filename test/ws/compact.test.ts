/**
 * The compact encoding (protocol.md "Compact encoding"): a client offering the subprotocol gets
 * stream messages as arrays, with and without permessage-deflate, learns each stream's number from
 * `subscribed` before any of its data, and rebuilds exactly what upstream has; a client not offering
 * it gets JSON as before; resume works the same; an odd offer breaks nothing.
 */
import { once } from 'node:events';
import { request as httpRequest } from 'node:http';
import { constants, inflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { BookState } from '../../packages/protocol/src/protocol/book.ts';
import {
  COMPACT_SUBPROTOCOL,
  decodeCompactStreamMessage,
} from '../../packages/protocol/src/protocol/compact.ts';
import type { BookDepth, StreamMessage } from '../../packages/protocol/src/protocol/messages.ts';
import { priceDataOf } from '../../src/relay/channels/price/codec.ts';
import { toFrame } from '../../src/relay/streams/frame.ts';
import { selectSubprotocol } from '../../src/ws/endpoint.ts';
import { type Message, ProtocolClient } from '../support/clients/protocol-client.ts';
import { expectedBook, type Harness, upstreamBook, upstreamPrices, useHarness } from '../support/harness.ts';
import { waitFor } from '../support/wait-for.ts';

const MARKET = '3f0c5a4e-8b7d-4c1a-9e2f-1a2b3c4d5e6f';
const bookUpdate: StreamMessage = {
  type: 'update',
  channel: 'book',
  market: MARKET,
  epoch: 'k3J9xQ',
  seq: 42,
  ts: '2026-01-01T00:00:00.100Z',
  rts: '2026-01-01T00:00:00.350Z',
  depth: 10,
  data: { bids: [['0.78000000', '120.5']], asks: [['0.80000000', '0']] },
  checksum: 12345,
};
const lookup = new Map([[5, { channel: 'book' as const, market: MARKET, depth: 10 as const }]]);

/** The payload of a server frame (no mask), inflated when RSV1 says it is compressed. */
function payloadOf(wire: Buffer): string {
  const length = wire[1]! & 0x7f;
  const offset = length === 126 ? 4 : length === 127 ? 10 : 2;
  const body = wire.subarray(offset);
  if ((wire[0]! & 0x40) === 0) return body.toString('utf8');
  const tail = Buffer.from([0, 0, 0xff, 0xff]);
  return inflateRawSync(Buffer.concat([body, tail]), { finishFlush: constants.Z_SYNC_FLUSH }).toString(
    'utf8',
  );
}

describe('compact frames', () => {
  it('decode to the message, plain and compressed, built once per message', () => {
    const frame = toFrame(bookUpdate);
    expect(frame.compactWire(5)).toBe(frame.compactWire(5));
    expect(frame.compactDeflatedWire(5)).toBe(frame.compactDeflatedWire(5));
    for (const wire of [frame.compactWire(5), frame.compactDeflatedWire(5)]) {
      const decoded = decodeCompactStreamMessage(JSON.parse(payloadOf(wire)), lookup);
      expect(decoded).toEqual({ ok: true, message: bookUpdate });
    }
    expect(frame.compactWire(5).length).toBeLessThan(frame.wire.length * 0.6);
  });

  it('carry the number they are asked for', () => {
    const frame = toFrame(bookUpdate);
    expect(JSON.parse(payloadOf(frame.compactWire(5)))[1]).toBe(5);
    expect(JSON.parse(payloadOf(frame.compactWire(6)))[1]).toBe(6);
  });
});

describe('subprotocol selection', () => {
  it.each([
    [[COMPACT_SUBPROTOCOL], COMPACT_SUBPROTOCOL],
    [['graphql-ws', COMPACT_SUBPROTOCOL], COMPACT_SUBPROTOCOL],
    [['graphql-ws', 'other'], 'graphql-ws'],
    [['market-relay.compact.2'], 'market-relay.compact.2'],
    [[], false],
  ])('answers %j with %j', (offered, selected) => {
    expect(selectSubprotocol(new Set(offered))).toBe(selected);
  });
});

describe('compact WebSocket connections', () => {
  let harness: Harness;
  const { opened, start } = useHarness();

  async function connect(protocols: string[], perMessageDeflate = false): Promise<ProtocolClient> {
    const client = await ProtocolClient.connect(harness.relay.url, { perMessageDeflate }, protocols);
    opened.push(client);
    return client;
  }

  /** Ticks the simulator and waits until the relay's full-book stream has published the change. */
  async function tickAndWait(market: string): Promise<void> {
    const stream = harness.relay.registry.get({ channel: 'book', market, depth: null })!;
    const seq = stream.seq;
    harness.sim.tick();
    await waitFor('the relay to publish the tick', () => stream.seq > seq);
  }

  it("rebuild upstream's books, prices and orders from arrays, plain and compressed, in fewer bytes", async () => {
    harness = await start({ sim: { markets: 3 }, relay: { compression: true } });
    const markets = harness.sim.market.activeMarketIds().slice(0, 2);
    const compressing = await connect([COMPACT_SUBPROTOCOL], true);
    const compact = await connect(['graphql-ws', COMPACT_SUBPROTOCOL]);
    const json = await connect([]);
    expect([compressing.ws.protocol, compact.ws.protocol, json.ws.protocol]).toEqual([
      COMPACT_SUBPROTOCOL,
      COMPACT_SUBPROTOCOL,
      '',
    ]);
    expect(compressing.ws.extensions).toBe('permessage-deflate');
    expect([...harness.relay.ws.connections].map((c) => c.encoding)).toEqual(['compact', 'compact', 'json']);

    const subscriptions = [
      { channel: 'book', depth: 10 },
      { channel: 'book' },
      { channel: 'price' },
      { channel: 'orders' },
    ];
    for (const client of [compressing, compact, json]) {
      for (const subscription of subscriptions) {
        const reply = await client.request({ op: 'subscribe', markets, ...subscription });
        if (client === json) {
          expect(reply.streams).toBeUndefined();
          continue;
        }
        const streams = reply.streams as Record<string, number>;
        expect(Object.keys(streams).sort()).toEqual([...markets].sort());
        for (const market of markets) {
          const stream = harness.relay.registry.get({
            channel: subscription.channel as 'book',
            market,
            depth: subscription.depth as BookDepth,
          })!;
          expect(streams[market]).toBe(stream.number);
        }
      }
    }
    for (let round = 0; round < 3; round++) for (const market of markets) await tickAndWait(market);

    const prices = new Map((await upstreamPrices(harness.sim, markets)).map((p) => [p.market_id, p]));
    for (const market of markets) {
      const book = await upstreamBook(harness.sim, market);
      for (const client of [compressing, compact, json]) {
        for (const depth of [10, null] as const) {
          const expected = JSON.stringify(expectedBook(book, depth));
          await waitFor(`${market} depth ${depth} equal to upstream`, () =>
            JSON.stringify(client.view('book', market, depth)?.state) === expected ? true : undefined,
          );
        }
        const price = JSON.stringify(priceDataOf(prices.get(market)!));
        await waitFor(`${market} price equal to upstream`, () =>
          JSON.stringify(client.view('price', market)?.state) === price ? true : undefined,
        );
        // Orders: the same state as the JSON client's at the same position.
        await waitFor(`${market} orders as the JSON client has them`, () => {
          const mine = client.view('orders', market);
          const reference = json.view('orders', market);
          return mine !== undefined && reference !== undefined && mine.seq === reference.seq
            ? JSON.stringify(mine.state) === JSON.stringify(reference.state)
            : undefined;
        });
      }
    }
    // Every stream message of the compact clients came as an array whose number they knew by then.
    for (const client of [compressing, compact, json]) expect(client.violations).toEqual([]);
    const streamMessages = (client: ProtocolClient) =>
      client.messages.filter((m) => m.type === 'snapshot' || m.type === 'update');
    expect(compressing.compactMessages).toBe(streamMessages(compressing).length);
    expect(compact.compactMessages).toBe(streamMessages(compact).length);
    expect(json.compactMessages).toBe(0);

    // Bytes on the socket against the JSON text of what was decoded (per client: counts may differ).
    const jsonBytes = (messages: Message[]) =>
      messages.reduce((sum, message) => sum + Buffer.byteLength(JSON.stringify(message)), 0);
    // The compact encoding is of stream messages only: the others (`subscribed`, and as many
    // `confirmed` as a slow machine's waits let through) come as JSON text on both sides. Its
    // saving is about a quarter here (0.77 x on a quiet machine), less where the machine's pace
    // leaves more `orders` (its data as in JSON) and fewer book updates in the mix.
    const others = jsonBytes(compact.messages.filter((m) => m.type !== 'snapshot' && m.type !== 'update'));
    expect(compact.socket!.bytesRead - others).toBeLessThan(jsonBytes(streamMessages(compact)) * 0.9);
    expect(compressing.socket!.bytesRead).toBeLessThan(jsonBytes(compressing.messages) * 0.5);
  });

  it('announce a stream number before its first data message, also for a stream joined on a busy connection', async () => {
    harness = await start({ sim: { markets: 4 }, relay: { tuning: { coalesceMs: 20 } } });
    const [first, ...others] = harness.sim.market.activeMarketIds() as string[];
    // Another client keeps the streams going, so that joining them sends a snapshot at once.
    const warm = await connect([]);
    await warm.request({ op: 'subscribe', channel: 'book', markets: [first, ...others], depth: 10 });
    await warm.request({ op: 'subscribe', channel: 'price', markets: [first, ...others] });
    await waitFor('the streams to have states', () => (warm.of('snapshot').length === 8 ? true : undefined));
    const client = await connect([COMPACT_SUBPROTOCOL]);
    await client.request({ op: 'subscribe', channel: 'book', markets: [first], depth: 10 });
    await client.request({ op: 'subscribe', channel: 'price', markets: [first] });
    // While the first streams send, more streams join, one request at a time and without waiting.
    const ticking = setInterval(() => harness.sim.tick(), 5);
    try {
      for (const market of others) {
        client.send({ op: 'subscribe', channel: 'book', markets: [market], depth: 10 });
        client.send({ op: 'subscribe', channel: 'price', markets: [market, first] });
      }
      await waitFor('every stream updating', () =>
        others.every((market) => (client.view('book', market, 10)?.updates ?? 0) > 0) ? true : undefined,
      );
    } finally {
      clearInterval(ticking);
    }
    // A number unknown at arrival would have been a violation (decoding needs it).
    expect(client.violations).toEqual([]);
    expect(client.compactMessages).toBeGreaterThan(others.length);
  });

  it('resume without a gap (recovered: true), the replay as arrays', async () => {
    harness = await start({ sim: { markets: 2 } });
    const market = harness.sim.market.activeMarketIds()[0]!;
    const before = await connect([COMPACT_SUBPROTOCOL], true);
    await before.request({ op: 'subscribe', channel: 'book', markets: [market] });
    await waitFor('snapshot', () => before.view('book', market));
    await tickAndWait(market);
    await waitFor('an update', () => before.view('book', market)!.updates === 1);
    const { epoch, seq, state } = before.view('book', market)!;
    await before.close();
    for (let i = 0; i < 3; i++) await tickAndWait(market);

    const after = await connect([COMPACT_SUBPROTOCOL], true);
    const reply = await after.request({
      op: 'subscribe',
      channel: 'book',
      markets: [market],
      resume: { [market]: { epoch, seq } },
    });
    expect(reply).toMatchObject({ recovered: { [market]: true }, streams: { [market]: expect.any(Number) } });
    await waitFor('three replayed updates', () => (after.of('update').length === 3 ? true : undefined));
    const replayed = after.of('update');
    expect(replayed.map((m) => m.seq)).toEqual([seq + 1, seq + 2, seq + 3]);
    expect(after.of('snapshot')).toEqual([]);
    expect(after.compactMessages).toBe(3);
    const { applyBookUpdate } = await import('../../packages/protocol/src/protocol/book.ts');
    const resumed = replayed.reduce(
      (book, m) => applyBookUpdate(book, m.data as BookState),
      state as BookState,
    );
    expect(resumed).toEqual(expectedBook(await upstreamBook(harness.sim, market), null));
  });

  it('leave a client offering something else on JSON, and a malformed offer harms no one', async () => {
    harness = await start({ sim: { markets: 1 } });
    const market = harness.sim.market.activeMarketIds()[0]!;
    const other = await connect(['market-relay.compact.2', 'chat']);
    expect(other.ws.protocol).toBe('market-relay.compact.2');
    expect(await other.request({ op: 'subscribe', channel: 'price', markets: [market] })).not.toHaveProperty(
      'streams',
    );
    await waitFor('a JSON snapshot', () => other.view('price', market));
    expect(other.compactMessages).toBe(0);

    // A header ws cannot parse: refused before the upgrade, with an HTTP error.
    const { port } = new URL(harness.relay.url);
    const refused = httpRequest({
      host: '127.0.0.1',
      port,
      path: '/v1/ws',
      headers: {
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': Buffer.alloc(16, 1).toString('base64'),
        'sec-websocket-protocol': 'a b,,market-relay.compact.1',
      },
    });
    refused.end();
    const [response] = (await once(refused, 'response')) as [{ statusCode: number; resume(): void }];
    response.resume();
    expect(response.statusCode).toBe(400);

    const after = await connect([COMPACT_SUBPROTOCOL]);
    await after.request({ op: 'subscribe', channel: 'price', markets: [market] });
    await waitFor('a compact snapshot', () => (after.compactMessages === 1 ? true : undefined));
    expect(other.ws.readyState).toBe(other.ws.OPEN);
  });
});
