/**
 * The SDK against a real relay and simulator in each encoding (docs/client.md "Encoding"): with
 * the default (compact) the relay selects the subprotocol and sends arrays, with `json` it sends
 * objects, and either way the books and prices stay equal to upstream over ticks, with no resync.
 */
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { BookSubscription, WebSocketConstructor } from '../../../packages/client/src/node.ts';
import { COMPACT_SUBPROTOCOL } from '../../../packages/protocol/src/protocol/compact.ts';
import { useHarness } from '../../support/harness.ts';
import {
  connectRecorded,
  expectBooksEqualUpstream,
  expectPricesEqualUpstream,
  recordResyncs,
  tickAndPublish,
} from '../sdk-support.ts';

/** `ws`, recording the subprotocol each socket got and every frame it read. */
function recordingWebSocket(protocols: string[], frames: string[]): WebSocketConstructor {
  return class extends WebSocket {
    constructor(url: string, offered?: string[]) {
      super(url, offered);
      this.on('open', () => protocols.push(this.protocol));
      this.on('message', (data: Buffer) => frames.push(data.toString()));
    }
  };
}

describe('client SDK: both encodings keep streams equal to upstream', () => {
  const { opened, start } = useHarness();

  it.each(['compact', 'json'] as const)('%s', async (encoding) => {
    const harness = await start({ sim: { markets: 3 } });
    const markets = harness.sim.market.marketIds().slice(0, 2);
    const protocols: string[] = [];
    const frames: string[] = [];
    const { client, errors } = connectRecorded(harness.relay.url, {
      ...(encoding === 'json' ? { encoding } : {}),
      WebSocket: recordingWebSocket(protocols, frames),
    });
    opened.push(client);
    const books: BookSubscription[] = markets.flatMap((m) => [
      client.subscribeBook(m),
      client.subscribeBook(m, { depth: 10 }),
    ]);
    const prices = markets.map((m) => client.subscribePrice(m));
    const resyncs = recordResyncs(books);
    let updates = 0;
    for (const book of books) book.on('update', () => updates++);

    await expectBooksEqualUpstream(harness.sim, books);
    for (let round = 0; round < 3; round++) {
      await tickAndPublish(harness.sim, harness.relay, markets[0]!);
      await expectBooksEqualUpstream(harness.sim, books);
      await expectPricesEqualUpstream(harness.sim, prices);
    }
    expect(updates).toBeGreaterThan(0);
    expect(resyncs).toEqual([]);
    expect(errors).toEqual([]);

    const arrays = frames.filter((frame) => frame.startsWith('['));
    const streamObjects = frames.filter((frame) => /^\{"type":"(snapshot|update)"/.test(frame));
    if (encoding === 'compact') {
      expect(protocols).toEqual([COMPACT_SUBPROTOCOL]);
      expect(arrays.length).toBeGreaterThan(books.length + prices.length);
      expect(streamObjects).toEqual([]);
    } else {
      expect(protocols).toEqual(['']);
      expect(arrays).toEqual([]);
      expect(streamObjects.length).toBeGreaterThan(books.length + prices.length);
    }
  });
});
