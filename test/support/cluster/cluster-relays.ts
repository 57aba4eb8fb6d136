/**
 * @module test/support/cluster/cluster-relays
 * Relays of one cluster in this process: `startClusterRelay`, the relay every such test starts
 * (cluster mode on a given Redis, polling the simulator fast), and `useClusterRelays`, two of them
 * on a private Redis Cluster (3 primaries, a replica each) for the tests of cluster mode on a Redis
 * Cluster: one given a single node's URL (it finds cluster mode itself), one the list, each with a
 * client of every book.
 */
import pino from 'pino';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import type { TuningOverrides } from '../../../src/config/tuning.ts';
import { type Relay, startRelay } from '../../../src/relay-server.ts';
import { type SimulatorHandle, startSimulator } from '../../../src/sim/server.ts';
import { ProtocolClient } from '../clients/protocol-client.ts';
import { expectedBook, upstreamBook } from '../harness.ts';
import { waitFor } from '../wait-for.ts';
import { type RedisCluster, startRedisCluster } from './redis.ts';

/**
 * A relay in this process, in cluster mode on `redis` (a URL, or what `--redis` takes for a Redis
 * Cluster), polling the simulator at `upstream` every 25 ms with an upstream budget that never
 * holds it back, a stream lingering 1 s after its last subscriber, and no heartbeat within a test
 * (`tuning` may set other limits and timings, such as the drain window). The caller closes it.
 */
export function startClusterRelay(
  upstream: string,
  redis: string,
  tuning: TuningOverrides = {},
): Promise<Relay> {
  return startRelay(
    {
      port: 0,
      host: '127.0.0.1',
      upstream,
      redis,
      bookPollMs: 25,
      pricePollMs: 25,
      upstreamConcurrency: 8,
      upstreamRps: 1000,
      logLevel: 'silent',
      // Read only when the relay embeds its own simulator (`--upstream sim`), never here.
      simMarkets: 4,
      simSeed: 3,
      tuning: { heartbeatMs: 60_000, lingerMs: 1_000, ...tuning },
    },
    pino({ level: 'silent' }),
  );
}

export interface ClusterRelays {
  readonly redis: RedisCluster;
  readonly markets: string[];
  /** Two relays with a client of every book on each, once both coordinate every book. */
  start(): Promise<{ a: Relay; b: Relay; viewers: ProtocolClient[] }>;
  /** Ticks upstream `rounds` times; each time every client's every book equals upstream's; no violation. */
  expectInSync(viewers: ProtocolClient[], rounds: number, timeoutMs?: number): Promise<void>;
}

export function useClusterRelays(): ClusterRelays {
  let redis: RedisCluster;
  let sim: SimulatorHandle;
  let markets: string[];
  const relays: Relay[] = [];
  const clients: ProtocolClient[] = [];
  beforeAll(async () => {
    [redis, sim] = await Promise.all([
      startRedisCluster({ primaries: 3, replicas: 1, nodeTimeoutMs: 1_000 }),
      startSimulator({ markets: 4, seed: 5, tickMs: 0 }),
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

  async function relay(spec: string): Promise<Relay> {
    const started = await startClusterRelay(sim.url, spec);
    relays.push(started);
    return started;
  }

  async function watching(of: Relay): Promise<ProtocolClient> {
    // Uncompressed, as in balanced-relays.ts: what these tests check is coordination, and inflating
    // in the test's own process is what fell behind on a loaded machine.
    const client = await ProtocolClient.connect(of.url, { perMessageDeflate: false });
    clients.push(client);
    await client.request({ op: 'subscribe', channel: 'book', markets });
    return client;
  }

  return {
    get redis() {
      return redis;
    },
    get markets() {
      return markets;
    },
    async start() {
      const [a, b] = [await relay(redis.nodes[0]!.url), await relay(redis.spec)];
      const viewers = [await watching(a), await watching(b)];
      await waitFor(
        'both relays to coordinate every book',
        () => a.broker.status().owned + b.broker.status().owned === markets.length,
      );
      return { a, b, viewers };
    },
    async expectInSync(viewers, rounds, timeoutMs = 10_000) {
      for (let round = 0; round < rounds; round++) {
        sim.tick();
        for (const market of markets) {
          const book = await upstreamBook(sim, market);
          const ts = new Date(book.timestamp).toISOString();
          for (const viewer of viewers) {
            await waitFor(
              `round ${round}: ${market} at ${ts}`,
              () => viewer.view('book', market)?.ts === ts,
              {
                timeoutMs,
              },
            );
            expect(viewer.view('book', market)!.state).toEqual(expectedBook(book, null));
          }
        }
      }
      for (const viewer of viewers) expect(viewer.violations).toEqual([]);
    },
  };
}
