/**
 * Slow consumers (protocol.md "Slow consumers"): a client that stops reading never grows the
 * relay's memory without bound. Above the high-water mark its updates are held back; when it
 * drains, each held-back stream gets one fresh snapshot; past the time limit it is closed with 4008.
 */
import { describe, expect, it } from 'vitest';
import { ProtocolClient } from '../support/clients/protocol-client.ts';
import { expectedBook, type Harness, upstreamBook, useHarness } from '../support/harness.ts';
import { floodUntilHeldBack, slowConsumerHarness } from '../support/slow-consumer.ts';
import { waitFor } from '../support/wait-for.ts';

describe('slow consumers', () => {
  let harness: Harness;
  const { opened: clients, start: startTestHarness } = useHarness();

  /** Stops reading and makes the relay write snapshots until it holds this connection back. */
  async function stall(client: ProtocolClient, markets: string[]): Promise<void> {
    client.socket!.pause();
    await floodUntilHeldBack(harness.relay, (frame) => client.send(frame), markets);
  }

  it('holds updates back while the client is slow, then resends each stream as one snapshot', async () => {
    harness = await startTestHarness(slowConsumerHarness());
    const markets = harness.sim.market.marketIds();
    const conflations: number[] = [];
    harness.relay.events.on('connection:conflated', ({ streams }) => conflations.push(streams));
    const slow = await ProtocolClient.connect(harness.relay.url);
    const healthy = await ProtocolClient.connect(harness.relay.url);
    clients.push(slow, healthy);
    await slow.request({ op: 'subscribe', channel: 'book', markets });
    await healthy.request({ op: 'subscribe', channel: 'book', markets });
    await waitFor('snapshots', () => markets.every((m) => slow.view('book', m) && healthy.view('book', m)));

    await stall(slow, markets);
    const connection = [...harness.relay.ws.connections].find((c) => c.isHoldingBack)!;
    for (let i = 0; i < 3; i++) {
      const seq = harness.relay.registry.get({ channel: 'book', market: markets[0]! })!.seq;
      harness.sim.tick();
      await waitFor(
        'the relay to publish',
        () => harness.relay.registry.get({ channel: 'book', market: markets[0]! })!.seq > seq,
      );
    }
    // Held back, not queued: the buffer did not grow by the updates the healthy client received.
    expect(connection.isHoldingBack).toBe(true);
    expect(connection.bufferedBytes).toBeLessThan(harness.relay.tuning.connection.maxBufferBytes);

    slow.socket!.resume();
    await waitFor('a conflation', () => conflations.length > 0);
    expect(conflations[0]).toBe(markets.length);
    for (const market of markets) {
      const expected = expectedBook(await upstreamBook(harness.sim, market), null);
      await waitFor(`slow client caught up on ${market}`, () =>
        JSON.stringify(slow.view('book', market)?.state) === JSON.stringify(expected) ? true : undefined,
      );
      expect(healthy.view('book', market)!.state).toEqual(expected);
    }
    expect(slow.violations).toEqual([]);
    expect(healthy.violations).toEqual([]);
    expect(slow.closeCode).toBeUndefined();
  });

  it('closes a connection that stays above the high-water mark too long with 4008', async () => {
    harness = await startTestHarness(slowConsumerHarness(200));
    const markets = harness.sim.market.marketIds();
    const slowCloses: number[] = [];
    const closeCodes: number[] = [];
    harness.relay.events.on('connection:slow-consumer', ({ id }) => slowCloses.push(id));
    harness.relay.events.on('connection:close', ({ code }) => closeCodes.push(code));
    const slow = await ProtocolClient.connect(harness.relay.url);
    const healthy = await ProtocolClient.connect(harness.relay.url);
    clients.push(slow, healthy);
    await healthy.request({ op: 'subscribe', channel: 'book', markets: [markets[0]] });
    await stall(slow, markets);
    await waitFor('the slow-consumer close', () => slowCloses.length === 1);
    slow.socket!.resume();
    await waitFor('the client to read the close', () => slow.closeCode, { timeoutMs: 20_000 });
    expect(slow.closeCode).toBe(4008);
    await waitFor('the relay to count the close', () => closeCodes.length === 1);
    expect(closeCodes).toEqual([4008]);
    expect(healthy.closeCode).toBeUndefined();
    expect((await healthy.request({ op: 'ping' })).type).toBe('pong');
  });

  it('drops a slow consumer that never reads after the close grace, and still counts 4008', async () => {
    const options = slowConsumerHarness(200);
    harness = await startTestHarness({
      ...options,
      relay: {
        tuning: {
          connection: { ...options.relay.tuning?.connection, closeGraceMs: 300, slowConsumerLingerMs: 300 },
        },
      },
    });
    const markets = harness.sim.market.marketIds();
    const closeCodes: number[] = [];
    harness.relay.events.on('connection:close', ({ code }) => closeCodes.push(code));
    const slow = await ProtocolClient.connect(harness.relay.url);
    clients.push(slow);
    await stall(slow, markets);
    // Never resumed: the relay stops reading it, and after the grace the socket is gone.
    await waitFor('the connection to be gone', () => harness.relay.ws.connections.size === 0, {
      timeoutMs: 10_000,
    });
    expect(closeCodes).toEqual([4008]);
    slow.ws.terminate(); // still paused: it would never read the relay's goodbye
  });
});
