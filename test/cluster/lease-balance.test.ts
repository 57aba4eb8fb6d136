/**
 * Leases spread over the live relays (docs/cluster.md "How leases move"), on a Redis Cluster of three
 * primaries: with 30 books subscribed on every relay, each relay holds its share and each book is
 * polled about once per interval for the cluster; a relay that joins takes its share while no
 * client of the others sees a gap or a snapshot.
 */
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Relay, startRelay } from '../../src/relay-server.ts';
import { type SimulatorHandle, startSimulator } from '../../src/sim/server.ts';
import { upstreamBook } from '../support/harness.ts';
import { ProtocolClient } from '../support/protocol-client.ts';
import { type RedisCluster, redisClusterAvailable, startRedisCluster } from '../support/redis.ts';
import { waitFor } from '../support/wait-for.ts';

const MARKETS = 30;
const BOOK_POLL_MS = 100;

describe.skipIf(!redisClusterAvailable())('leases spread over the relays', () => {
  let redis: RedisCluster;
  let sim: SimulatorHandle;
  let markets: string[];
  const relays: Relay[] = [];
  const clients: ProtocolClient[] = [];
  beforeAll(async () => {
    [redis, sim] = await Promise.all([
      startRedisCluster({ primaries: 3 }),
      startSimulator({ markets: MARKETS, seed: 9, tickMs: 50 }),
    ]);
    markets = sim.market.marketIds();
  }, 20_000);
  afterAll(async () => {
    await Promise.all([redis?.stop(), sim?.close()]);
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
    await Promise.all(relays.splice(0).map((relay) => relay.close()));
  });

  /** A relay with a client of every book. */
  async function relayWithClient(): Promise<{ relay: Relay; client: ProtocolClient }> {
    const relay = await startRelay(
      {
        port: 0,
        host: '127.0.0.1',
        upstream: sim.url,
        redis: redis.spec,
        bookPollMs: BOOK_POLL_MS,
        pricePollMs: 1_000,
        upstreamConcurrency: 16,
        upstreamRps: 5_000,
        logLevel: 'silent',
        simMarkets: MARKETS,
        simSeed: 9,
        tuning: { heartbeatMs: 60_000, lingerMs: 1_000, rebalanceMs: 100 },
      },
      pino({ level: 'silent' }),
    );
    relays.push(relay);
    const client = await ProtocolClient.connect(relay.url);
    clients.push(client);
    await client.request({ op: 'subscribe', channel: 'book', markets });
    return { relay, client };
  }

  const owned = () => relays.map((relay) => relay.coordinator.status().owned);
  const snapshots = (client: ProtocolClient) =>
    client.messages.filter((message) => message.type === 'snapshot').length;

  it('gives each of three relays 5 to 15 of 30 books, each book polled about once per interval', async () => {
    for (let i = 0; i < 3; i += 1) await relayWithClient();
    await waitFor(
      'every relay to hold 5 to 15 book leases, 30 in all',
      () =>
        owned().every((count) => count >= 5 && count <= 15) && owned().reduce((a, b) => a + b) === MARKETS,
      { timeoutMs: 8_000, everyMs: 50 },
    );
    // Each relay's share, as an operator sees it.
    await waitFor('every relay to report its lease share', async () => {
      for (const relay of relays) {
        const { redis: cluster } = (await (await fetch(`${relay.url}/health`)).json()) as {
          redis: { relays: number; leaseShare: number };
        };
        const metrics = await (await fetch(`${relay.url}/metrics`)).text();
        const share = Number(/^market_relay_cluster_lease_share (\S+)$/m.exec(metrics)?.[1]);
        if (cluster.relays !== 3 || cluster.leaseShare < 0.15 || cluster.leaseShare > 0.55) return false;
        expect(share).toBeCloseTo(cluster.leaseShare, 1);
      }
      return true;
    });
    // Upstream's own log: book requests per market over a window of 2 s.
    const startedAt = Date.now();
    await waitFor('a window of 2 s', () => Date.now() - startedAt >= 2_000, { everyMs: 50 });
    const endedAt = Date.now();
    const polls = new Map<string, number>();
    for (const entry of sim.requests)
      if (entry.path === '/clob/orderbook' && entry.at >= startedAt && entry.at < endedAt) {
        const market = entry.query.market_id!;
        polls.set(market, (polls.get(market) ?? 0) + 1);
      }
    const intervals = (endedAt - startedAt) / BOOK_POLL_MS;
    const perInterval = [...polls.values()].map((count) => count / intervals);
    expect(polls.size).toBe(MARKETS);
    expect(Math.max(...perInterval)).toBeLessThanOrEqual(1.3);
    for (const client of clients) expect(client.violations).toEqual([]);
  });

  it('gives a joining relay its share with no gap or snapshot for any client of the others', async () => {
    const first = [await relayWithClient(), await relayWithClient()];
    await waitFor('two relays sharing the books', () => owned().every((count) => count >= 8), {
      timeoutMs: 8_000,
      everyMs: 50,
    });
    await waitFor('every book on both clients', () =>
      first.every(({ client }) => markets.every((market) => client.view('book', market))),
    );
    const before = first.map(({ client }) => snapshots(client));
    await relayWithClient();
    await waitFor('the joining relay to take its share', () => owned()[2]! >= 5, {
      timeoutMs: 8_000,
      everyMs: 50,
    });
    // Every book, moved or not, reaches the clients of the first two as upstream has it now.
    const upstreamNow = await Promise.all(
      markets.map(async (market) => new Date((await upstreamBook(sim, market)).timestamp).toISOString()),
    );
    await waitFor('every book as upstream has it now on the clients of the first two', () =>
      first.every(({ client }) =>
        markets.every((market, m) => client.view('book', market)!.ts >= upstreamNow[m]!),
      ),
    );
    expect(first.map(({ client }) => snapshots(client))).toEqual(before);
    for (const { client } of first) expect(client.violations).toEqual([]);
  });
});
