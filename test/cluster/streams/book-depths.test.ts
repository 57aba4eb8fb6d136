/**
 * Book depths in cluster mode: the lease holder numbers every depth of a market (1, 5, 10, 25, 50,
 * full) from its one poll, so a client of the other relay keeps depths 1 and 25 equal to upstream,
 * checksummed and gap-free, while upstream sees one poller. Grouped books (docs/protocol.md
 * "Grouped books") are summed by each relay from the holder's one response, as shared.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { BookDepth } from '../../../packages/protocol/src/protocol/messages.ts';
import type { Relay } from '../../../src/relay-server.ts';
import { type SimulatorHandle, startSimulator } from '../../../src/sim/server.ts';
import { ProtocolClient } from '../../support/clients/protocol-client.ts';
import { startClusterRelay } from '../../support/cluster/cluster-relays.ts';
import { redisAvailable, useRedis } from '../../support/cluster/redis.ts';
import { summedByHand } from '../../support/grouped-book.ts';
import { expectedBook, upstreamBook } from '../../support/harness.ts';
import { waitFor } from '../../support/wait-for.ts';

describe.skipIf(!redisAvailable())('book depths in cluster mode', () => {
  const redis = useRedis();
  let sim: SimulatorHandle;
  const relays: Relay[] = [];
  const clients: ProtocolClient[] = [];

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
    await Promise.all(relays.splice(0).map((relay) => relay.close()));
    await sim.close();
  });

  it('serves every depth to clients of both relays from one poller', async () => {
    sim = await startSimulator({ markets: 2, seed: 3, tickMs: 0 });
    for (let i = 0; i < 2; i++) relays.push(await startClusterRelay(sim.url, redis.server.url));
    const [market] = sim.market.marketIds() as [string];
    const plan: [number, BookDepth][] = [
      [0, 5],
      [0, null],
      [1, 1],
      [1, 25],
      [1, null],
    ];
    for (const relay of relays) clients.push(await ProtocolClient.connect(relay.url));
    for (const [i, depth] of plan)
      await clients[i]!.request({ op: 'subscribe', channel: 'book', markets: [market], depth });
    await waitFor('a snapshot on every depth', () =>
      plan.every(([i, d]) => clients[i]!.view('book', market, d)),
    );
    for (let round = 0; round < 3; round++) {
      sim.tick();
      const book = await upstreamBook(sim, market);
      for (const [i, depth] of plan) {
        const expected = JSON.stringify(expectedBook(book, depth));
        await waitFor(`round ${round}: relay ${i} depth ${depth}`, () =>
          JSON.stringify(clients[i]!.view('book', market, depth)?.state) === expected ? true : undefined,
        );
      }
    }
    // A lease may still be moving to the relay rendezvous hashing names: one relay ends up holding it.
    await waitFor('one relay polling the book', () =>
      relays
        .map((relay) => relay.broker.status().owned)
        .sort()
        .join() === '0,1'
        ? true
        : undefined,
    );
    for (const client of clients) {
      expect(client.violations).toEqual([]);
      expect(client.of('error')).toEqual([]);
    }
  });

  it('serves grouped books to clients of both relays from the one poller’s response', async () => {
    sim = await startSimulator({ markets: 2, seed: 3, tickMs: 0 });
    for (let i = 0; i < 2; i++) relays.push(await startClusterRelay(sim.url, redis.server.url));
    // Quoted in 0.001 (docs/upstream.md: every 4th market from the 2nd).
    const market = sim.market.marketIds()[1]!;
    const plan: [number, BookDepth, string][] = [
      [0, null, '0.05'],
      [1, 10, '0.01'],
      [1, null, '0.05'],
    ];
    for (const relay of relays) clients.push(await ProtocolClient.connect(relay.url));
    for (const [i, depth, group] of plan)
      await clients[i]!.request({ op: 'subscribe', channel: 'book', markets: [market], depth, group });
    await waitFor('a snapshot on every grouped book', () =>
      plan.every(([i, d, g]) => clients[i]!.view('book', market, d, g)),
    );
    for (let round = 0; round < 3; round++) {
      sim.tick();
      const book = await upstreamBook(sim, market);
      for (const [i, depth, group] of plan) {
        const expected = JSON.stringify(summedByHand(book, group, depth));
        await waitFor(`round ${round}: relay ${i} depth ${depth} group ${group}`, () =>
          JSON.stringify(clients[i]!.view('book', market, depth, group)?.state) === expected
            ? true
            : undefined,
        );
      }
    }
    await waitFor('one relay polling the book', () =>
      relays
        .map((relay) => relay.broker.status().owned)
        .sort()
        .join() === '0,1'
        ? true
        : undefined,
    );
    for (const client of clients) {
      expect(client.violations).toEqual([]);
      expect(client.of('error')).toEqual([]);
    }
  });
});
