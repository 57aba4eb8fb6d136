/**
 * `interval` on a subscription over WebSocket (docs/protocol.md "Per-subscription options"), the
 * simulator ticked by the test: a burst of changes reaches a paced subscriber as at most one
 * message per interval, each after the first a conflated update naming the `seq` it applies to
 * (`prev_seq`, or the seq before its own), the last one leaving upstream's latest book (checksums checked by the recorder)
 * without a further tick; two subscribers of the same interval get the same messages, a
 * raw subscriber of the stream every update; bad intervals are refused with the id; `list` shows
 * the interval and `update` changes it in place.
 */
import { describe, expect, it } from 'vitest';
import { COMPACT_SUBPROTOCOL } from '../../packages/protocol/src/protocol/compact.ts';
import { appliesTo } from '../support/clients/message-recorder.ts';
import { type Message, ProtocolClient } from '../support/clients/protocol-client.ts';
import { expectedBook, type Harness, upstreamBook, useHarness } from '../support/harness.ts';
import { waitFor } from '../support/wait-for.ts';

const INTERVAL = 400;

describe('interval subscriptions over WebSocket', () => {
  let harness: Harness;
  const { opened, start } = useHarness();

  async function connect(protocols: string[] = []): Promise<ProtocolClient> {
    const client = await ProtocolClient.connect(harness.relay.url, {}, protocols);
    opened.push(client);
    return client;
  }

  const data = (client: ProtocolClient, from: number): Message[] =>
    client.messages.slice(from).filter((m) => m.type === 'snapshot' || m.type === 'update');

  for (const protocols of [[], [COMPACT_SUBPROTOCOL]]) {
    it(`conflates a burst to the latest state (${protocols.length === 0 ? 'json' : 'compact'})`, async () => {
      harness = await start({ sim: { markets: 2 } });
      const [a] = harness.sim.market.activeMarketIds();
      const [raw, paced, twin] = [await connect(protocols), await connect(protocols), await connect()];
      await raw.request({ op: 'subscribe', channel: 'book', markets: [a], depth: 10 });
      for (const client of [paced, twin]) {
        const answer = await client.request({
          op: 'subscribe',
          channel: 'book',
          markets: [a],
          depth: 10,
          interval: INTERVAL,
        });
        expect(answer).toMatchObject({ type: 'subscribed', interval: INTERVAL });
      }
      for (const client of [raw, paced, twin])
        await waitFor('the first snapshot', () => client.view('book', a!, 10));
      const from = { raw: raw.messages.length, paced: paced.messages.length, twin: twin.messages.length };
      const startedAt = Date.now();
      let latest = '';
      // Each step waits for the raw subscriber to hold upstream's new book: the relay took it.
      for (let step = 0; step < 12; step += 1) {
        harness.sim.tick();
        latest = JSON.stringify(expectedBook(await upstreamBook(harness.sim, a!), 10));
        await waitFor('the raw subscriber to hold the new book', () =>
          JSON.stringify(raw.view('book', a!, 10)?.state) === latest ? true : undefined,
        );
      }
      // The burst's last state arrives within an interval, without another tick.
      await waitFor('the paced subscriber to hold the latest book', () =>
        JSON.stringify(paced.view('book', a!, 10)?.state) === latest ? true : undefined,
      );
      const elapsed = Date.now() - startedAt;
      const sent = data(paced, from.paced);
      expect(sent.length).toBeGreaterThan(0);
      expect(sent.length).toBeLessThanOrEqual(1 + Math.ceil(elapsed / INTERVAL));
      // Each message applies to the one before it: conflated updates, after a first snapshot at most.
      expect(sent.slice(1).every((m) => m.type === 'update')).toBe(true);
      const conflated = sent.filter((m) => m.type === 'update');
      expect(conflated.length).toBeGreaterThan(0);
      const all = data(paced, 0);
      for (const [i, m] of all.entries()) if (i > 0) expect(appliesTo(m)).toBe(all[i - 1]!.seq);
      expect(data(raw, from.raw).length).toBeGreaterThan(0);
      expect(data(raw, from.raw).some((m) => m.type === 'update')).toBe(true);
      // Same interval, same group: the same messages (the twin reads JSON, their data is the same).
      await waitFor('the twin to hold the latest book', () =>
        JSON.stringify(twin.view('book', a!, 10)?.state) === latest ? true : undefined,
      );
      const seqs = (messages: Message[]) => messages.map((m) => m.seq);
      expect(seqs(data(twin, from.twin))).toEqual(seqs(sent));
      for (const client of [raw, paced, twin]) expect(client.violations).toEqual([]);
    });
  }

  it('resumes a paced subscription: the missed updates replayed, then paced', async () => {
    harness = await start({ sim: { markets: 2 } });
    const [a] = harness.sim.market.activeMarketIds();
    const selection = { channel: 'book', markets: [a], depth: 10, interval: INTERVAL };
    const first = await connect();
    await first.request({ op: 'subscribe', ...selection });
    const held = await waitFor('the first snapshot', () => first.view('book', a!, 10));
    const from = { epoch: held.epoch, seq: held.seq };
    // Held by another client meanwhile: the stream and its resume ring stay, however slow the machine.
    const keeper = await connect();
    await keeper.request({ op: 'subscribe', channel: 'book', markets: [a], depth: 10 });
    first.close();
    const stream = harness.relay.registry.get({ channel: 'book', market: a!, depth: 10 })!;
    let latest = '';
    for (let step = 0; step < 4; step += 1) {
      harness.sim.tick();
      latest = JSON.stringify(expectedBook(await upstreamBook(harness.sim, a!), 10));
      await waitFor('the relay to take the tick', () => JSON.stringify(stream.state) === latest);
    }
    expect(stream.seq).toBeGreaterThan(from.seq);
    const again = await connect();
    // The recorder applies the replay onto the state it held, as a client resuming would.
    again.streams.set(`book:${a}:10`, { ...held, updates: 0 });
    const answer = await again.request({ op: 'subscribe', ...selection, resume: { [a!]: from } });
    expect(answer).toMatchObject({ type: 'subscribed', interval: INTERVAL, recovered: { [a!]: true } });
    await waitFor('the resumed book at upstream', () =>
      JSON.stringify(again.view('book', a!, 10)?.state) === latest ? true : undefined,
    );
    expect(again.of('update').length).toBe(stream.seq - from.seq);
    expect(again.violations).toEqual([]);
  });

  it('sends a member that joined its group since the last send the snapshot, not the update', async () => {
    harness = await start({ sim: { markets: 2 } });
    const [a] = harness.sim.market.activeMarketIds();
    const selection = { op: 'subscribe', channel: 'book', markets: [a], depth: 10, interval: 1_500 };
    const [first, later] = [await connect(), await connect()];
    await first.request(selection);
    await waitFor('the first snapshot', () => first.view('book', a!, 10));
    const stream = harness.relay.registry.get({ channel: 'book', market: a!, depth: 10 })!;
    const tick = async () => {
      const seq = stream.seq;
      harness.sim.tick();
      await waitFor('the relay to take the tick', () => stream.seq > seq);
    };
    await tick(); // after a quiet interval: sent at once, and the group's interval starts
    await waitFor('the leading update', () => data(first, 0).length === 2 || undefined);
    await tick(); // owed to the interval's end
    await later.request(selection); // joins the group at the owed state
    const joinedWhileOwed = data(first, 0).length === 2;
    await tick();
    const latest = stream.seq;
    for (const client of [first, later])
      await waitFor(
        'the latest state',
        () => (client.view('book', a!, 10)?.seq === latest ? true : undefined),
        {
          timeoutMs: 10_000,
        },
      );
    const kinds = data(later, 0).map((m) => `${m.type} ${m.seq}`);
    // Joined between the group's sends: the group's update applies to a state it was never sent.
    if (joinedWhileOwed) expect(kinds).toEqual([`snapshot ${latest - 1}`, `snapshot ${latest}`]);
    const all = data(first, 0);
    for (const [i, m] of all.entries()) if (i > 0) expect(appliesTo(m)).toBe(all[i - 1]!.seq);
    for (const client of [first, later]) expect(client.violations).toEqual([]);
  });

  it('refuses bad intervals with the id and changes nothing', async () => {
    harness = await start({ sim: { markets: 2 } });
    const [a] = harness.sim.market.activeMarketIds();
    const client = await connect();
    await client.request({ op: 'subscribe', channel: 'price', markets: [a] });
    // The list names the last seq sent: take it once the first snapshot is in.
    await waitFor('the price snapshot', () => client.view('price', a!));
    const before = await client.request({ op: 'list' });
    const bad: [Record<string, unknown>, RegExp][] = [
      ...[0, 99, 60_001, '1000', 36_000_000, 150.5, null].map(
        (interval): [Record<string, unknown>, RegExp] => [
          { op: 'subscribe', channel: 'book', markets: [a], interval },
          /interval/,
        ],
      ),
      [{ op: 'subscribe', channel: 'trades', markets: [a], interval: 1000 }, /trades.*event/],
      [{ op: 'subscribe', channel: 'price', markets: ['*'], interval: 1000 }, /interval/],
      [{ op: 'update', channel: 'price', markets: [a], interval: 50 }, /interval/],
      [{ op: 'update', channel: 'trades', markets: [a], interval: 1000 }, /trades/],
      [{ op: 'update', channel: 'book', markets: [a], interval: 1000 }, /not held/],
    ];
    for (const [request, message] of bad) {
      const answer = await client.request(request);
      expect(answer, JSON.stringify(request)).toMatchObject({ type: 'error', code: 'bad_request' });
      expect(answer.message).toMatch(message);
    }
    expect(await client.request({ op: 'list' })).toMatchObject({ subscriptions: before.subscriptions });
  });

  it('lists the interval and changes it in place', async () => {
    harness = await start({ sim: { markets: 2 } });
    const [a] = harness.sim.market.activeMarketIds();
    const client = await connect();
    await client.request({ op: 'subscribe', channel: 'price', markets: [a], interval: 1000 });
    await client.request({ op: 'subscribe', channel: 'book', markets: [a], depth: 10 });
    const listed = async () =>
      ((await client.request({ op: 'list' })).subscriptions as Message[]).map(({ channel, interval }) => ({
        channel,
        interval,
      }));
    expect(await listed()).toEqual([
      { channel: 'price', interval: 1000 },
      { channel: 'book', interval: undefined },
    ]);
    const stream = harness.relay.registry.get({ channel: 'price', market: a! })!;
    const answer = await client.request({ op: 'update', channel: 'price', markets: [a], interval: 250 });
    expect(answer).toMatchObject({ type: 'subscribed', channel: 'price', markets: [a], interval: 250 });
    const moved = await client.request({ op: 'update', channel: 'book', markets: [a], depth: 50 });
    expect(moved).toMatchObject({ type: 'subscribed', depth: 50 });
    await client.request({ op: 'update', channel: 'book', markets: [a], interval: 500 });
    expect(await listed()).toEqual([
      { channel: 'price', interval: 250 },
      { channel: 'book', interval: 500 },
    ]);
    // The same stream, paced anew: no second subscription.
    expect(harness.relay.registry.get({ channel: 'price', market: a! })).toBe(stream);
    await client.request({ op: 'update', channel: 'price', markets: [a], interval: null });
    await client.request({ op: 'update', channel: 'book', markets: [a], depth: 10 });
    expect(await listed()).toEqual([
      { channel: 'price', interval: undefined },
      { channel: 'book', interval: 500 },
    ]);
    expect(client.violations).toEqual([]);
  });
});
