/**
 * The SDK's side of `update` and `list` (docs/client.md "Changing a book's depth", "The relay's
 * list") against a relay: a book moves to another depth and its state becomes upstream's book at
 * that depth; a depth the SDK does not have throws at once, as on subscribe, and changes nothing;
 * the relay's list names what the SDK holds.
 */
import { describe, expect, it } from 'vitest';
import { type Harness, useHarness } from '../../support/harness.ts';
import { waitFor } from '../../support/wait-for.ts';
import {
  connectRecorded,
  expectBooksEqualUpstream,
  type RecordedClient,
  recordResyncs,
} from '../sdk-support.ts';

describe('client SDK: a book changes depth in place, and the relay lists the streams', () => {
  let harness: Harness;
  const { opened, start } = useHarness();

  function sdk(url: string, encoding?: 'json', transport?: 'sse'): RecordedClient {
    const recorded = connectRecorded(url, {
      ...(encoding === undefined ? {} : { encoding }),
      ...(transport === undefined ? {} : { transport }),
    });
    opened.push(recorded.client);
    return recorded;
  }

  for (const encoding of [undefined, 'json'] as const) {
    it(`moves a book to depth 50 and lists it (${encoding ?? 'compact'})`, async () => {
      harness = await start({ sim: { markets: 2 } });
      const [market, other] = harness.sim.market.activeMarketIds();
      const { client, errors } = sdk(harness.relay.url, encoding);
      const book = client.subscribeBook(market!, { depth: 10 });
      const price = client.subscribePrice(other!);
      await expectBooksEqualUpstream(harness.sim, [book]);
      const resyncs = recordResyncs([book]);

      await book.update({ depth: 50 });
      expect(book.depth).toBe(50);
      await expectBooksEqualUpstream(harness.sim, [book]);
      const stream = harness.relay.registry.get({ channel: 'book', market: market!, depth: 50 })!;
      const seq = stream.seq;
      harness.sim.tick();
      await waitFor('the relay to publish the tick', () => stream.seq > seq);
      await expectBooksEqualUpstream(harness.sim, [book]);
      expect(resyncs).toEqual([]);
      expect(client.subscribeBook(market!, { depth: 50 })).toBe(book);

      const listed = await client.subscriptions();
      expect(listed.type).toBe('subscriptions');
      const entries = listed.subscriptions.map(({ channel, market: id, depth }) => ({ channel, id, depth }));
      expect(entries).toEqual(
        expect.arrayContaining([
          { channel: 'book', id: market, depth: 50 },
          { channel: 'price', id: other, depth: undefined },
        ]),
      );
      expect(entries).toHaveLength(2);
      expect(listed.limits.streams.held).toBe(2);
      expect(client.streams).toEqual(expect.arrayContaining([book, price]));
      expect(errors).toEqual([]);
    });
  }

  it('refuses a depth it does not have at once, as subscribeBook does, and keeps the book as it was', async () => {
    harness = await start({ sim: { markets: 1 } });
    const [market] = harness.sim.market.activeMarketIds();
    const { client } = sdk(harness.relay.url);
    const book = client.subscribeBook(market!, { depth: 10 });
    await expectBooksEqualUpstream(harness.sim, [book]);
    for (const depth of [7, 0, '10', 10.5] as unknown as 10[])
      expect(() => book.update({ depth }), String(depth)).toThrow(
        new TypeError(`depth must be 1, 5, 10, 25, 50, 'full' or null, got ${depth}`),
      );
    expect(() => client.subscribeBook(market!, { depth: 7 as unknown as 10 })).toThrow(TypeError);
    expect(book.depth).toBe(10);
    expect(book.status).toBe('live');
    const listed = await client.subscriptions();
    expect(listed.subscriptions.map((entry) => entry.depth)).toEqual([10]);
  });

  it('throws at the call on both requests over SSE, which carries none', async () => {
    harness = await start({ sim: { markets: 1 } });
    const [market] = harness.sim.market.activeMarketIds();
    const { client } = sdk(harness.relay.url, undefined, 'sse');
    const book = client.subscribeBook(market!, { depth: 10 });
    await expectBooksEqualUpstream(harness.sim, [book]);
    expect(() => book.update({ depth: 50 })).toThrow(/book.update\(\) needs a WebSocket/);
    expect(() => client.subscriptions()).toThrow(/subscriptions\(\) needs a WebSocket/);
    expect(book.depth).toBe(10);
  });
});
