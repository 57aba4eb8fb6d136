/**
 * @module test/support/balanced-relays
 * Relays in this process on a private Redis Cluster of three primaries (or one Redis), 30 simulated
 * markets (or as many as asked), each relay with a client of every book, announcing themselves
 * every 100 ms: for the tests of how leases spread over the relays (docs/cluster.md "How leases move").
 */
import pino from 'pino';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { type Relay, startRelay } from '../../src/relay-server.ts';
import { type SimulatorHandle, startSimulator } from '../../src/sim/server.ts';
import { upstreamBook } from './harness.ts';
import { ProtocolClient } from './protocol-client.ts';
import { type RedisDeployment, startRedisDeployment } from './redis.ts';

export const MARKETS = 30;
export const BOOK_POLL_MS = 100;

export interface BalancedRelays {
  readonly sim: SimulatorHandle;
  readonly markets: string[];
  /** The running relays, in start order (a test that stops one removes it). */
  readonly relays: Relay[];
  readonly clients: ProtocolClient[];
  relayWithClient(): Promise<{ relay: Relay; client: ProtocolClient }>;
  /** Leases each running relay holds. */
  owned(): number[];
  /** Each book's timestamp as upstream has it now. */
  upstreamNow(): Promise<string[]>;
}

export interface BalancedRelaysOptions {
  /** One Redis or a Redis Cluster of three primaries (the default). */
  redis?: RedisDeployment['topology']['kind'];
  markets?: number;
}

export function useBalancedRelays(options: BalancedRelaysOptions = {}): BalancedRelays {
  const marketCount = options.markets ?? MARKETS;
  let redis: RedisDeployment;
  let sim: SimulatorHandle;
  let markets: string[];
  const relays: Relay[] = [];
  const clients: ProtocolClient[] = [];
  beforeAll(async () => {
    [redis, sim] = await Promise.all([
      startRedisDeployment(options.redis ?? 'cluster'),
      startSimulator({ markets: marketCount, seed: 9, tickMs: 50 }),
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

  return {
    get sim() {
      return sim;
    },
    get markets() {
      return markets;
    },
    relays,
    clients,
    async relayWithClient() {
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
          simMarkets: marketCount,
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
    },
    owned: () => relays.map((relay) => relay.coordinator.status().owned),
    upstreamNow: () =>
      Promise.all(
        markets.map(async (market) => new Date((await upstreamBook(sim, market)).timestamp).toISOString()),
      ),
  };
}
