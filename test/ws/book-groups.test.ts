/**
 * Grouped books (docs/protocol.md "Grouped books"): a `group` step on a `book` subscription sums
 * upstream's levels into multiples of the step (bids down, asks up), each (market, depth, group) a
 * checksummed stream of its own, all served from the one order-book request per market per poll;
 * a step not offered is refused with the request's id and the offered steps; `update` moves a
 * held book to another group, `list` shows it, and SSE and `GET /v1/book` take the step as a query
 * parameter.
 */
import Big from 'big.js';
import { describe, expect, it } from 'vitest';
import { type BookState, bookChecksum } from '../../packages/protocol/src/protocol/book.ts';
import { bookGroups } from '../../packages/protocol/src/protocol/group.ts';
import type { BookDepth } from '../../packages/protocol/src/protocol/messages.ts';
import type { OrderBook } from '../../src/upstream/schemas.ts';
import { ProtocolClient } from '../support/clients/protocol-client.ts';
import { SseClient } from '../support/clients/sse-client.ts';
import { summedByHand } from '../support/grouped-book.ts';
import { type Harness, upstreamBook, useHarness } from '../support/harness.ts';
import { waitFor } from '../support/wait-for.ts';

describe('grouped books', () => {
  let harness: Harness;
  const { opened, start } = useHarness();

  async function connect(): Promise<ProtocolClient> {
    const client = await ProtocolClient.connect(harness.relay.url);
    opened.push(client);
    return client;
  }

  /** A market of the simulator quoted in 0.001 (docs/upstream.md: every 4th from the 2nd). */
  function finelyQuoted(): string {
    return harness.sim.market.marketIds()[1]!;
  }

  it('sums upstream’s book into 0.05 and 0.01 steps at several depths, from one order-book request per market per poll', async () => {
    harness = await start({ sim: { markets: 2 } });
    const market = finelyQuoted();
    const client = await connect();
    const held: [BookDepth, string | undefined][] = [
      [null, '0.05'],
      [10, '0.05'],
      [5, '0.01'],
      [10, undefined],
    ];
    for (const [depth, group] of held) {
      const reply = await client.request({
        op: 'subscribe',
        channel: 'book',
        markets: [market],
        depth,
        group,
      });
      expect(reply).toMatchObject({ type: 'subscribed', channel: 'book', markets: [market], depth });
      expect(reply.group).toBe(group);
    }
    const view = (depth: BookDepth, group: string | undefined) => client.view('book', market, depth, group);
    await waitFor('a snapshot on every stream', () => held.every(([depth, group]) => view(depth, group)));
    const snapshots = client.of('snapshot');
    expect(new Set(snapshots.map((message) => message.group))).toEqual(new Set(['0.05', '0.01', undefined]));

    harness.sim.clearRequests();
    const rounds = 4;
    let book: OrderBook | undefined;
    for (let round = 0; round < rounds; round++) {
      harness.sim.tick();
      book = await upstreamBook(harness.sim, market);
      for (const [depth, group] of held) {
        if (group === undefined) continue;
        const expected = JSON.stringify(summedByHand(book!, group, depth));
        await waitFor(`group ${group} depth ${depth} summed from upstream`, () =>
          JSON.stringify(view(depth, group)?.state) === expected ? true : undefined,
        );
      }
    }
    // Summing changed something: the 0.001-quoted book has more levels than its 0.05 groups.
    const grouped = view(null, '0.05')!.state as BookState;
    expect(grouped.bids.every(([price]) => new Big(price).mod('0.05').eq(0))).toBe(true);
    expect(grouped.bids.length).toBeLessThan(new Set(book!.bids.map(({ price }) => price)).size);
    const orderBookReads = harness.sim.requests.filter((r) => r.path === '/clob/orderbook');
    // The relay's polls plus this test's one read per round: a request per stream would be four times more.
    const relayPolls = orderBookReads.length - rounds;
    const elapsedMs = harness.sim.requests.at(-1)!.at - harness.sim.requests[0]!.at;
    expect(relayPolls).toBeLessThanOrEqual(
      Math.ceil(elapsedMs / harness.relay.poller.intervals.bookIntervalMs) + 2,
    );
    expect(client.violations).toEqual([]);
    expect(client.of('error')).toEqual([]);
  });

  it('refuses a step not offered with the request’s id and the offered steps, nothing else changing', async () => {
    harness = await start({ sim: { markets: 2 } });
    const market = finelyQuoted();
    const client = await connect();
    await client.request({ op: 'subscribe', channel: 'book', markets: [market], group: '0.01' });
    await waitFor('the grouped book', () => client.view('book', market, null, '0.01'));
    const before = client.messages.length;
    const offered = bookGroups.map((step) => `"${step}"`).join(', ');
    for (const group of ['0.03', '0.0005', '0', '-0.05', '.05', '0.05000000001', 0.05, true, null]) {
      const reply = await client.request({ op: 'subscribe', channel: 'book', markets: [market], group });
      expect(reply, String(group)).toMatchObject({ type: 'error', code: 'bad_request' });
      expect(reply.message, String(group)).toContain(offered);
    }
    expect(
      await client.request({ op: 'subscribe', channel: 'price', markets: [market], group: '0.05' }),
    ).toMatchObject({
      type: 'error',
      code: 'bad_request',
      message: '"group" applies to the book channel only',
    });
    expect(client.messages.slice(before).filter((m) => m.type !== 'error' && m.type !== 'update')).toEqual(
      [],
    );
    // "0.010" is the offered "0.01": the same stream, subscribed again.
    const again = await client.request({
      op: 'subscribe',
      channel: 'book',
      markets: [market],
      group: '0.010',
    });
    expect(again).toMatchObject({ type: 'subscribed', group: '0.01' });
    // Unsubscribing the ungrouped book leaves the grouped one; naming its group ends it.
    await client.request({ op: 'unsubscribe', channel: 'book', markets: [market] });
    expect((await client.request({ op: 'list' })).subscriptions).toEqual([
      expect.objectContaining({ group: '0.01' }),
    ]);
    const left = await client.request({
      op: 'unsubscribe',
      channel: 'book',
      markets: [market],
      group: '0.01',
    });
    expect(left).toMatchObject({ type: 'unsubscribed', group: '0.01' });
    expect((await client.request({ op: 'list' })).subscriptions).toEqual([]);
    expect(client.violations).toEqual([]);
  });

  it('moves a held book to another group with update, lists the group and unsubscribes it', async () => {
    harness = await start({ sim: { markets: 2 } });
    const market = finelyQuoted();
    const client = await connect();
    await client.request({ op: 'subscribe', channel: 'book', markets: [market], depth: 10 });
    await waitFor('the book', () => client.view('book', market, 10));
    const moved = await client.request({ op: 'update', channel: 'book', markets: [market], group: '0.05' });
    expect(moved).toMatchObject({ type: 'subscribed', group: '0.05' });
    await waitFor('the grouped snapshot', () => client.view('book', market, 10, '0.05'));
    const list = await client.request({ op: 'list' });
    expect(list.subscriptions).toEqual([
      expect.objectContaining({ channel: 'book', depth: 10, group: '0.05' }),
    ]);
    harness.sim.tick();
    const expected = JSON.stringify(summedByHand(await upstreamBook(harness.sim, market), '0.05', 10));
    await waitFor('the grouped book following upstream', () =>
      JSON.stringify(client.view('book', market, 10, '0.05')?.state) === expected ? true : undefined,
    );
    const back = await client.request({ op: 'update', channel: 'book', markets: [market], group: null });
    expect(back).toMatchObject({ type: 'subscribed' });
    expect(back.group).toBeUndefined();
    expect((await client.request({ op: 'list' })).subscriptions).toEqual([
      expect.not.objectContaining({ group: expect.anything() }),
    ]);
    const left = await client.request({ op: 'unsubscribe', channel: 'book', markets: [market], depth: 10 });
    expect(left).toMatchObject({ type: 'unsubscribed', depth: 10 });
    expect((await client.request({ op: 'list' })).subscriptions).toEqual([]);
    expect(client.violations).toEqual([]);
  });

  it('resumes a grouped stream: the missed updates replayed in order, recovered = true', async () => {
    harness = await start({ sim: { markets: 2 } });
    const market = finelyQuoted();
    // On a book quoted in 0.001 a 0.001 group has every level of its own: every tick changes it.
    const selection = { op: 'subscribe', channel: 'book', markets: [market], group: '0.001' };
    const stream = () =>
      harness.relay.registry.get({ channel: 'book', market, depth: null, group: '0.001' })!;
    const tickAndWait = async (times: number) => {
      for (let i = 0; i < times; i++) {
        const seq = stream().seq;
        harness.sim.tick();
        await waitFor('the relay to publish the tick', () => stream().seq > seq);
      }
    };
    const first = await connect();
    await first.request(selection);
    await waitFor('the snapshot', () => first.view('book', market, null, '0.001'));
    await tickAndWait(1);
    await waitFor('an update', () => first.view('book', market, null, '0.001')!.updates === 1);
    const { epoch, seq } = first.view('book', market, null, '0.001')!;
    await first.close();
    await tickAndWait(2); // missed while away; the stream lingers and keeps being served

    const second = await connect();
    const reply = await second.request({ ...selection, resume: { [market]: { epoch, seq } } });
    expect(reply).toMatchObject({ type: 'subscribed', group: '0.001', recovered: { [market]: true } });
    await waitFor('two replayed updates', () => (second.of('update').length === 2 ? true : undefined));
    expect(second.of('update').map((m) => [m.epoch, m.seq, m.group])).toEqual([
      [epoch, seq + 1, '0.001'],
      [epoch, seq + 2, '0.001'],
    ]);
    expect(second.of('snapshot')).toEqual([]);
  });

  it('streams a grouped book over SSE and refuses a step not offered', async () => {
    harness = await start({ sim: { markets: 2 } });
    const market = finelyQuoted();
    const client = await SseClient.connect(
      `${harness.relay.url}/v1/sse?channel=book&group=0.05&markets=${market}`,
    );
    opened.push(client);
    await waitFor('the snapshot', () => client.view('book', market, null, '0.05'));
    expect(client.messages[0]).toMatchObject({ type: 'subscribed', group: '0.05' });
    harness.sim.tick();
    const expected = JSON.stringify(summedByHand(await upstreamBook(harness.sim, market), '0.05', null));
    await waitFor('the grouped book following upstream', () =>
      JSON.stringify(client.view('book', market, null, '0.05')?.state) === expected ? true : undefined,
    );
    expect(client.violations).toEqual([]);
    const refused = await fetch(`${harness.relay.url}/v1/sse?channel=book&group=0.03&markets=${market}`);
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: 'bad_request' });
  });

  it('answers GET /v1/book with a grouped book, and refuses a step not offered', async () => {
    harness = await start({ sim: { markets: 2 } });
    const market = finelyQuoted();
    const answer = await fetch(`${harness.relay.url}/v1/book/${market}?depth=5&group=0.050`);
    expect(answer.status).toBe(200);
    const snapshot = (await answer.json()) as { group: string; data: BookState; checksum: number };
    expect(snapshot.group).toBe('0.05');
    expect(snapshot.data).toEqual(summedByHand(await upstreamBook(harness.sim, market), '0.05', 5));
    expect(snapshot.checksum).toBe(bookChecksum(snapshot.data));
    const refused = await fetch(`${harness.relay.url}/v1/book/${market}?group=0.03`);
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { message: string }).message).toContain('"0.05"');
  });
});
