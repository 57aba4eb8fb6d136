/**
 * A connection's own view (docs/protocol.md "Listing subscriptions", "Changing a subscription"):
 * `list` names each stream held with the last position sent and the limits' use; `update` moves a
 * book stream to another depth in place, with a snapshot of the new one, on JSON and compact
 * connections; a bad `update` is one error with the id and changes nothing.
 */
import { describe, expect, it } from 'vitest';
import { COMPACT_SUBPROTOCOL } from '../../packages/protocol/src/protocol/compact.ts';
import { type Message, ProtocolClient } from '../support/clients/protocol-client.ts';
import { expectedBook, type Harness, upstreamBook, useHarness } from '../support/harness.ts';
import { waitFor } from '../support/wait-for.ts';

interface Entry {
  channel: string;
  market: string;
  depth?: number | null;
  epoch: string | null;
  seq: number | null;
  status?: string;
  wildcard?: true;
}

describe('list and update over WebSocket', () => {
  let harness: Harness;
  const { opened, start } = useHarness();

  async function connect(protocols: string[] = []): Promise<ProtocolClient> {
    const client = await ProtocolClient.connect(harness.relay.url, {}, protocols);
    opened.push(client);
    return client;
  }

  async function listOf(client: ProtocolClient): Promise<Message> {
    const answer = await client.request({ op: 'list' });
    expect(answer.type).toBe('subscriptions');
    return answer;
  }

  const entries = (answer: Message) =>
    (answer.subscriptions as Entry[]).map(({ channel, market, depth }) => ({ channel, market, depth }));

  it('lists what the connection holds, at the position it was sent, and its limits', async () => {
    harness = await start({ sim: { markets: 2 } });
    const [a] = harness.sim.market.activeMarketIds();
    const client = await connect();
    await client.request({ op: 'subscribe', channel: 'book', markets: [a], depth: 10 });
    await client.request({ op: 'subscribe', channel: 'price', markets: ['*'] });
    await waitFor('the book snapshot', () => client.view('book', a!, 10));
    const view = client.view('book', a!, 10)!;
    const answer = await listOf(client);
    const book = (answer.subscriptions as Entry[]).find((e) => e.channel === 'book')!;
    expect(book).toMatchObject({ market: a, depth: 10, epoch: view.epoch, status: 'live' });
    expect(book.seq).toBeGreaterThanOrEqual(view.seq);
    expect((answer.subscriptions as Entry[]).find((e) => e.wildcard)).toEqual({
      channel: 'price',
      market: '*',
      epoch: null,
      seq: null,
      wildcard: true,
    });
    const limits = answer.limits as Record<string, Record<string, unknown>>;
    expect(limits.streams!.held).toBe((answer.subscriptions as Entry[]).filter((e) => !e.wildcard).length);
    expect(limits.streams!.allowed).toBeGreaterThan(0);
    expect(limits.requests).toMatchObject({ burst: expect.any(Number), per_second: expect.any(Number) });
    expect(limits.channels!.rest).toEqual({ held: 0, allowed: expect.any(Number) });
    // Junk beside `op` is ignored, as on every request.
    const junk = await client.request({ op: 'list', extra: 1 });
    expect(junk.type).toBe('subscriptions');
  });

  for (const protocols of [[], [COMPACT_SUBPROTOCOL]]) {
    it(`moves a book to another depth in place (${protocols.length === 0 ? 'json' : 'compact'})`, async () => {
      harness = await start({ sim: { markets: 2 } });
      const [a] = harness.sim.market.activeMarketIds();
      const client = await connect(protocols);
      await client.request({ op: 'subscribe', channel: 'book', markets: [a], depth: 10 });
      await waitFor('the depth 10 snapshot', () => client.view('book', a!, 10));
      const from = client.messages.length;
      const answer = await client.request({ op: 'update', channel: 'book', markets: [a], depth: 50 });
      expect(answer).toMatchObject({ type: 'subscribed', channel: 'book', markets: [a], depth: 50 });
      if (protocols.length > 0) expect(Object.keys(answer.streams as object)).toEqual([a]);
      const expected = JSON.stringify(expectedBook(await upstreamBook(harness.sim, a!), 50));
      await waitFor('a snapshot of depth 50', () =>
        client.messages
          .slice(from)
          .find((m) => m.type === 'snapshot' && m.depth === 50 && JSON.stringify(m.data) === expected),
      );
      expect(entries(await listOf(client))).toEqual([{ channel: 'book', market: a, depth: 50 }]);
      expect(harness.relay.registry.get({ channel: 'book', market: a!, depth: 10 })?.clientCount ?? 0).toBe(
        0,
      );
      expect(client.violations).toEqual([]);

      // The depth already held: `subscribed`, nothing else.
      const same = client.messages.length;
      const again = await client.request({ op: 'update', channel: 'book', markets: [a], depth: 50 });
      expect(again).toMatchObject({ type: 'subscribed', depth: 50 });
      await client.request({ op: 'ping' });
      expect(client.messages.slice(same).map((m) => m.type)).toEqual(['subscribed', 'pong']);
    });
  }

  it('refuses a bad update whole, with the id, and changes nothing', async () => {
    harness = await start({ sim: { markets: 3 } });
    const [a, b, c] = harness.sim.market.activeMarketIds();
    const client = await connect();
    await client.request({ op: 'subscribe', channel: 'book', markets: [a, c], depth: 10 });
    await client.request({ op: 'subscribe', channel: 'book', markets: [c], depth: 50 });
    await client.request({ op: 'subscribe', channel: 'price', markets: [a] });
    const before = entries(await listOf(client));
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ channel: 'book', markets: [a, b], depth: 50 }, new RegExp(`book ${b} is not held`)],
      [{ channel: 'book', markets: [c], depth: null }, /several depths.*from_depth/],
      [{ channel: 'book', markets: [a], from_depth: 50, depth: null }, /at depth 50 is not held/],
      [{ channel: 'book', markets: [a], depth: 7 }, /depth/],
      [{ channel: 'book', markets: [a] }, /nothing to update/],
      [{ channel: 'price', markets: [a] }, /nothing to update/],
      [{ channel: 'trades', markets: [a], since: new Date().toISOString() }, /since.*subscribe again/],
    ];
    for (const [request, message] of cases) {
      const answer = await client.request({ op: 'update', ...request });
      expect(answer).toMatchObject({ type: 'error', code: 'bad_request' });
      expect(answer.message).toMatch(message);
    }
    expect(entries(await listOf(client))).toEqual(before);

    // Naming the depth to move resolves the ambiguity.
    const moved = await client.request({
      op: 'update',
      channel: 'book',
      markets: [c],
      from_depth: 50,
      depth: null,
    });
    expect(moved).toMatchObject({ type: 'subscribed', depth: null });
    const after = entries(await listOf(client)).filter((e) => e.market === c);
    expect(after.map((e) => e.depth).sort()).toEqual([10, null]);
  });
});
