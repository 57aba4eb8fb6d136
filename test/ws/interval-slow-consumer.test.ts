/**
 * A paced subscription held back as a slow consumer (docs/protocol.md "Per-subscription options",
 * "Slow consumers"): its paced snapshots are held back like any stream message, and when the client
 * drains it gets one fresh snapshot per stream and stays paced.
 */
import { describe, expect, it } from 'vitest';
import { ProtocolClient } from '../support/clients/protocol-client.ts';
import { expectedBook, type Harness, upstreamBook, useHarness } from '../support/harness.ts';
import { slowConsumerHarness } from '../support/slow-consumer.ts';
import { waitFor } from '../support/wait-for.ts';

describe('a paced slow consumer', () => {
  let harness: Harness;
  const { opened, start } = useHarness();

  it('is held back, then conflated to one snapshot per stream, and stays paced', async () => {
    harness = await start(slowConsumerHarness());
    const markets = harness.sim.market.marketIds();
    const conflations: number[] = [];
    harness.relay.events.on('connection:conflated', ({ streams }) => conflations.push(streams));
    const slow = await ProtocolClient.connect(harness.relay.url);
    opened.push(slow);
    const subscribe = { op: 'subscribe', channel: 'book', markets, interval: 200 };
    await slow.request(subscribe);
    await waitFor('snapshots', () => markets.every((m) => slow.view('book', m)));

    // Stops reading; repeated subscribes (each a snapshot per market, the same pace) fill its buffer.
    slow.socket!.pause();
    const frame = JSON.stringify(subscribe);
    await waitFor(
      'the relay to hold the connection back',
      () => {
        if ([...harness.relay.ws.connections].some((c) => c.isHoldingBack)) return true;
        for (let i = 0; i < 50; i++) slow.send(frame);
        return undefined;
      },
      { timeoutMs: 20_000, everyMs: 1 },
    );
    const stream = harness.relay.registry.get({ channel: 'book', market: markets[0]! })!;
    for (let i = 0; i < 3; i++) {
      const seq = stream.seq;
      harness.sim.tick();
      await waitFor('the relay to publish', () => stream.seq > seq);
    }
    // A tick may change other markets whose polls come after the resume: their updates are paced
    // messages after the drain, not held-back ones. What was published by now must arrive folded
    // into the fresh snapshots.
    const publishedBeforeResume = new Map(
      markets.map((market) => [market, harness.relay.registry.get({ channel: 'book', market })!.seq]),
    );
    slow.socket!.resume();
    await waitFor('a conflation', () => conflations.length > 0);
    for (const market of markets) {
      const expected = JSON.stringify(expectedBook(await upstreamBook(harness.sim, market), null));
      await waitFor(`the slow client caught up on ${market}`, () =>
        JSON.stringify(slow.view('book', market)?.state) === expected ? true : undefined,
      );
    }
    const heldBackUpdates = slow
      .of('update')
      .filter((update) => (update.seq as number) <= publishedBeforeResume.get(update.market as string)!);
    expect(heldBackUpdates).toEqual([]);
    expect(slow.violations).toEqual([]);
    expect(slow.closeCode).toBeUndefined();
    const listed = await slow.request({ op: 'list' });
    expect((listed.subscriptions as { interval?: number }[]).every((e) => e.interval === 200)).toBe(true);
  });
});
