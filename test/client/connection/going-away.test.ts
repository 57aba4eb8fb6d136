/**
 * The SDK follows a draining relay's `going_away` (docs/protocol.md "Going away"): it moves to the
 * next relay at the moment the relay named, not at a random moment of its own `goingAwaySpreadMs`,
 * also when the relay's 1001 comes first. Against two relays of one cluster, over WebSocket and
 * SSE, a drain moves it to the other relay with every stream resumed: no snapshot, no resync.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { connect } from '../../../packages/client/src/node.ts';
import type { Relay } from '../../../src/relay-server.ts';
import { type SimulatorHandle, startSimulator } from '../../../src/sim/server.ts';
import { startClusterRelay } from '../../support/cluster/cluster-relays.ts';
import { redisAvailable, useRedis } from '../../support/cluster/redis.ts';
import { waitFor } from '../../support/wait-for.ts';
import { expectBooksEqualUpstream, recordResyncs, tickAndPublish } from '../sdk-support.ts';

/** So long that a reconnect at a random moment of it would fail every test here. */
const LONG_SPREAD = { baseMs: 20, maxMs: 200, goingAwaySpreadMs: 60_000 };

describe('client SDK on going_away, against stand-in relays', () => {
  const servers: WebSocketServer[] = [];
  const clients: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
    await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
  });

  async function server(): Promise<{ url: string; server: WebSocketServer; connectedAt: number[] }> {
    const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    servers.push(wss);
    await once(wss, 'listening');
    const connectedAt: number[] = [];
    wss.on('connection', () => connectedAt.push(Date.now()));
    return { url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/v1/ws`, server: wss, connectedAt };
  }

  it.each([
    ['leaves on its own at the moment named', undefined],
    ['waits for the moment named when the 1001 comes first', 20],
  ] as const)('%s, and moves to the next relay', async (_title, closeAfterMs) => {
    const [draining, next] = [await server(), await server()];
    let toldAt = 0;
    draining.server.on('connection', (ws) => {
      toldAt = Date.now();
      ws.send(JSON.stringify({ type: 'going_away', reconnect_in_ms: 300 }));
      if (closeAfterMs !== undefined) setTimeout(() => ws.close(1001, 'relay shutting down'), closeAfterMs);
    });
    const client = connect([draining.url, next.url], { backoff: LONG_SPREAD });
    clients.push(client);
    const closes: number[] = [];
    client.on('close', ({ code }) => closes.push(code));
    await waitFor('the SDK on the next relay', () => next.connectedAt[0]);
    // Not before the moment (timers may fire a millisecond early), and not long after it.
    expect(next.connectedAt[0]! - toldAt).toBeGreaterThanOrEqual(295);
    expect(next.connectedAt[0]! - toldAt).toBeLessThan(3_000);
    expect(closes).toEqual([1001]);
    expect(client.url).toBe(next.url);
  });

  it('ignores a malformed going_away, reporting it', async () => {
    const relay = await server();
    relay.server.on('connection', (ws) =>
      ws.send(JSON.stringify({ type: 'going_away', reconnect_in_ms: -1 })),
    );
    const client = connect(relay.url, { backoff: LONG_SPREAD });
    clients.push(client);
    const errors: string[] = [];
    client.on('error', (error) => errors.push(error.message));
    await waitFor('the error', () => errors.length > 0);
    expect(errors[0]).toMatch(/malformed going_away/);
    expect(client.status).toBe('open');
  });
});

describe.skipIf(!redisAvailable())('client SDK through a drain of one relay of a cluster', () => {
  const redis = useRedis();
  let sim: SimulatorHandle | undefined;
  const relays: Relay[] = [];
  const clients: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
    await Promise.all(relays.splice(0).map((relay) => relay.close()));
    await sim?.close();
  });

  it.each(['websocket', 'sse'] as const)(
    'moves to the other relay over %s, every stream resumed',
    async (transport) => {
      sim = await startSimulator({ markets: 4, seed: 3, tickMs: 0 });
      const markets = sim.market.marketIds().slice(0, 2);
      const started = await Promise.all(
        [0, 1].map(() => startClusterRelay(sim!.url, redis.server.url, { drainMs: 400 })),
      );
      relays.push(...started);
      const [first, second] = started as [Relay, Relay];
      const client = connect([first.url, second.url], { transport, encoding: 'json', backoff: LONG_SPREAD });
      clients.push(client);
      const books = markets.map((market) => client.subscribeBook(market));
      await expectBooksEqualUpstream(sim, books);
      let snapshots = 0;
      for (const book of books) book.on('snapshot', () => snapshots++);
      const resyncs = recordResyncs(books);

      // Published before the drain: once its one client has left, a draining relay closes, and a
      // tick made during the drain could find the stream gone before the poll that carries it.
      await tickAndPublish(sim, first, markets[0]!);
      const drainedAt = Date.now();
      await first.drain();
      await waitFor(
        'the SDK on the second relay',
        () => client.status === 'open' && client.url.includes(new URL(second.url).host),
      );
      expect(Date.now() - drainedAt).toBeLessThan(400 + 3_000);
      sim.tick();
      await expectBooksEqualUpstream(sim, books);
      expect(snapshots).toBe(0);
      expect(resyncs).toEqual([]);
    },
  );
});
