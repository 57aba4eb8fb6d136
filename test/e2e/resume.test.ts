/**
 * Resume after a reconnect (protocol.md "Sequencing"): the relay replays the updates a client
 * missed while it still holds them, and falls back to a fresh snapshot when it cannot.
 */
import { describe, expect, it } from 'vitest';
import type { BookState } from '../../packages/protocol/src/protocol/book.ts';
import { ProtocolClient } from '../support/clients/protocol-client.ts';
import { expectedBook, type Harness, upstreamBook, useHarness } from '../support/harness.ts';
import { waitFor } from '../support/wait-for.ts';

describe('resume', () => {
  let harness: Harness;
  const { opened: clients, start: startTestHarness } = useHarness();

  async function connect(): Promise<ProtocolClient> {
    const client = await ProtocolClient.connect(harness.relay.url);
    clients.push(client);
    return client;
  }

  /** Ticks the simulator and waits until the relay's stream has published the change. */
  async function tickAndWait(market: string, times: number): Promise<void> {
    for (let i = 0; i < times; i++) {
      const stream = harness.relay.registry.get({ channel: 'book', market, depth: null })!;
      const seq = stream.seq;
      harness.sim.tick();
      await waitFor('the relay to publish the tick', () => stream.seq > seq);
    }
  }

  it('replays the missed updates in order and reports recovered = true', async () => {
    harness = await startTestHarness({ sim: { markets: 3 } });
    const market = harness.sim.market.marketIds()[0]!;
    const first = await connect();
    await first.request({ op: 'subscribe', channel: 'book', markets: [market] });
    await waitFor('snapshot', () => first.view('book', market));
    await tickAndWait(market, 2);
    await waitFor('two updates', () => first.view('book', market)!.updates === 2);
    const { epoch, seq, state } = first.view('book', market)!;
    await first.close();

    await tickAndWait(market, 3); // missed while disconnected; the stream lingers and keeps polling

    const second = await connect();
    const reply = await second.request({
      op: 'subscribe',
      channel: 'book',
      markets: [market],
      resume: { [market]: { epoch, seq } },
    });
    expect(reply).toMatchObject({ type: 'subscribed', recovered: { [market]: true } });
    await waitFor('three replayed updates', () =>
      second.messages.filter((m) => m.type === 'update').length === 3 ? true : undefined,
    );
    const replayed = second.messages.filter((m) => m.type === 'update');
    expect(replayed.map((m) => [m.epoch, m.seq])).toEqual([
      [epoch, seq + 1],
      [epoch, seq + 2],
      [epoch, seq + 3],
    ]);
    expect(second.of('snapshot')).toEqual([]);

    // Applying the replay to the state held before the disconnect gives upstream's book now.
    const { applyBookUpdate } = await import('../../packages/protocol/src/protocol/book.ts');
    const resumed = replayed.reduce(
      (book, m) => applyBookUpdate(book, m.data as BookState),
      state as BookState,
    );
    expect(resumed).toEqual(expectedBook(await upstreamBook(harness.sim, market), null));
  });

  it('falls back to a snapshot (recovered = false) for another epoch or updates no longer held', async () => {
    harness = await startTestHarness({ sim: { markets: 3 }, relay: { tuning: { resumeBufferSize: 2 } } });
    const [a, b] = harness.sim.market.marketIds() as [string, string];
    const client = await connect();
    await client.request({ op: 'subscribe', channel: 'book', markets: [a, b] });
    await waitFor('snapshots', () => client.view('book', a) && client.view('book', b));
    const before = { ...client.view('book', a)! }; // the view itself keeps moving
    await tickAndWait(a, 4); // more than the ring of 2 holds

    const other = await connect();
    const reply = await other.request({
      op: 'subscribe',
      channel: 'book',
      markets: [a, b],
      resume: { [a]: { epoch: before.epoch, seq: before.seq }, [b]: { epoch: 'not-our-epoch', seq: 1 } },
    });
    expect(reply).toMatchObject({ type: 'subscribed', recovered: { [a]: false, [b]: false } });
    await waitFor('two snapshots', () => other.of('snapshot').length === 2);
    expect(other.view('book', a)!.state).toEqual(expectedBook(await upstreamBook(harness.sim, a), null));
    expect(other.view('book', a)!.seq).toBe(harness.relay.registry.get({ channel: 'book', market: a })!.seq);
  });

  it('answers a repeated subscribe with a fresh snapshot (the way to resync one stream)', async () => {
    harness = await startTestHarness({ sim: { markets: 2 } });
    const market = harness.sim.market.marketIds()[0]!;
    const client = await connect();
    await client.request({ op: 'subscribe', channel: 'book', markets: [market], depth: 10 });
    await waitFor('snapshot', () => client.of('snapshot').length === 1);
    expect(
      await client.request({ op: 'subscribe', channel: 'book', markets: [market], depth: 10 }),
    ).toMatchObject({
      type: 'subscribed',
      depth: 10,
    });
    await waitFor('a second snapshot', () => client.of('snapshot').length === 2);
    expect(client.violations).toEqual([]);
  });
});
