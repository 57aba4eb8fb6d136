/**
 * @module test/support/cluster/balanced-relays
 * Relays in this process on a private Redis Cluster of three primaries (or one Redis), 18 simulated
 * markets (or as many as asked), each relay with a client of every book, announcing themselves
 * every 250 ms: for the tests of how leases spread over the relays (docs/cluster.md "How leases move").
 *
 * Which relay should hold a lease is a pure function of the live relays' instance ids and weights
 * (relay/coordination/redis/leases/rendezvous.ts), so the tests wait for exactly that split (`expectedOwned`), never for a
 * band of counts that random instance ids miss now and then. A relay's weight follows the poll CPU it
 * measures, which a loaded machine's preemption and GC pauses inflate at random, so the relays here
 * measure none and keep even weights unless a test asks for costs (`measureCosts`); then each poll
 * numbered counts as one millisecond, the same on every relay, however loaded the machine is (a test
 * scales one relay's meter to make it costly). The meter itself is tested on its own.
 */
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { RedisBroker } from '../../../src/relay/coordination/redis/broker.ts';
import { bookTargetKey, WEIGHT_KEY } from '../../../src/relay/coordination/redis/keys.ts';
import { parseWeight } from '../../../src/relay/coordination/redis/leases/relay-weight.ts';
import { preferredRelay } from '../../../src/relay/coordination/redis/leases/rendezvous.ts';
import { type Relay, startRelay } from '../../../src/relay-server.ts';
import { type SimulatorHandle, startSimulator } from '../../../src/sim/server.ts';
import { ProtocolClient } from '../clients/protocol-client.ts';
import { upstreamBook } from '../harness.ts';
import { waitFor } from '../wait-for.ts';
import { type RedisDeployment, startRedisDeployment } from './redis.ts';

export const MARKETS = 18;
export const BOOK_POLL_MS = 200;
/**
 * `--rebalance-ms`: a relay silent for three of these leaves the roster, so this is well above the
 * pauses a loaded machine gives a process running three relays, or relays would drop out and back.
 */
const REBALANCE_MS = 250;

export interface BalancedRelays {
  readonly sim: SimulatorHandle;
  readonly markets: string[];
  /** The running relays, in start order (a test that stops one removes it). */
  readonly relays: Relay[];
  readonly clients: ProtocolClient[];
  relayWithClient(): Promise<{ relay: Relay; client: ProtocolClient }>;
  /** Leases each running relay holds. */
  owned(): number[];
  /**
   * Leases each running relay should hold with `weights` (by relay index; default even): the books
   * weighted rendezvous hashing names it for among the running relays.
   */
  expectedOwned(weights?: number[]): number[];
  /**
   * Waits until every book is held and each relay holds exactly `expectedOwned()` (even weights),
   * however long a loaded machine takes; a timeout names the split seen and the one expected.
   */
  evenSplit(what: string, timeoutMs?: number): Promise<void>;
  /** The weight each running relay last announced in the roster (one Redis only). */
  announcedWeights(): Promise<number[]>;
  /** Whether the relays meter their polls, which their weights follow (from now on). */
  measureCosts(on: boolean): void;
  /** Makes each poll of relay `relayIndex` count as `factor` milliseconds, measuring. */
  scaleCost(relayIndex: number, factor: number): void;
  /** Each book's timestamp as upstream has it now. */
  upstreamNow(): Promise<string[]>;
}

export interface BalancedRelaysOptions {
  /** One Redis or a Redis Cluster of three primaries (the default). */
  redis?: RedisDeployment['topology']['kind'];
  markets?: number;
  /** Whether the relays meter their polls from the start (default: no, even weights). */
  measureCosts?: boolean;
}

export function useBalancedRelays(options: BalancedRelaysOptions = {}): BalancedRelays {
  const marketCount = options.markets ?? MARKETS;
  let measuring = options.measureCosts ?? false;
  let redis: RedisDeployment;
  /** Reads the roster for `announcedWeights`, made at its first use. */
  let inspector: Redis | undefined;
  let sim: SimulatorHandle;
  let markets: string[];
  const relays: Relay[] = [];
  const clients: ProtocolClient[] = [];
  /** By relay index: how many milliseconds one of its polls counts as, measuring (default 1). */
  const costScales: number[] = [];
  beforeAll(async () => {
    [redis, sim] = await Promise.all([
      startRedisDeployment(options.redis ?? 'cluster'),
      startSimulator({ markets: marketCount, seed: 9, tickMs: BOOK_POLL_MS }),
    ]);
    markets = sim.market.marketIds();
  }, 20_000);
  afterAll(async () => {
    inspector?.disconnect();
    await Promise.all([redis?.stop(), sim?.close()]);
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
    await Promise.all(relays.splice(0).map((relay) => relay.close()));
    costScales.length = 0;
  });

  const instanceOf = (relay: Relay) => (relay.broker as RedisBroker).coordinator.instanceId;

  const owned = () => relays.map((relay) => relay.broker.status().owned);
  const expectedOwned = (weights?: number[]) => {
    const instances = relays.map(instanceOf);
    const counts = instances.map(() => 0);
    const weightOf = (instance: string) => weights?.[instances.indexOf(instance)] ?? 1;
    for (const market of markets) {
      const holder = preferredRelay(bookTargetKey(market), instances, weightOf);
      counts[instances.indexOf(holder!)]! += 1;
    }
    return counts;
  };

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
          tuning: { heartbeatMs: 60_000, lingerMs: 1_000, rebalanceMs: REBALANCE_MS },
        },
        pino({ level: 'silent' }),
      );
      const { coordinator } = relay.broker as RedisBroker;
      const measure = coordinator.spent.bind(coordinator);
      // No poll CPU measured, no evidence: the weight stays even (relay/coordination/redis/leases/relay-weight.ts).
      // Measuring, a poll costs one millisecond on every relay (times its scale): the machine's noise
      // never weighs in.
      const index = relays.length;
      coordinator.spent = () => {
        if (measuring) measure(costScales[index] ?? 1);
      };
      relays.push(relay);
      // Uncompressed: in this one process, deflating for every client and inflating again would
      // double the CPU the relays need, which a loaded machine cannot spare; compression is not
      // what these tests are about.
      const client = await ProtocolClient.connect(relay.url, { perMessageDeflate: false });
      clients.push(client);
      await client.request({ op: 'subscribe', channel: 'book', markets });
      return { relay, client };
    },
    owned,
    expectedOwned,
    async evenSplit(what, timeoutMs = 10_000) {
      await waitFor(
        what,
        () =>
          JSON.stringify(owned()) === JSON.stringify(expectedOwned()) &&
          owned().reduce((a, b) => a + b) === marketCount,
        { timeoutMs, everyMs: 20 },
      ).catch((error: Error) => {
        throw new Error(`${error.message} (leases ${owned()}, expected ${expectedOwned()})`);
      });
    },
    async announcedWeights() {
      if (redis.topology.kind !== 'single') throw new Error('announcedWeights reads one Redis only');
      inspector ??= new Redis(redis.topology.url);
      const announced = await inspector.hmget(WEIGHT_KEY, ...relays.map(instanceOf));
      return announced.map((weight) => parseWeight(weight ?? undefined));
    },
    measureCosts(on) {
      measuring = on;
    },
    scaleCost(relayIndex, factor) {
      costScales[relayIndex] = factor;
    },
    upstreamNow: () =>
      Promise.all(
        markets.map(async (market) => new Date((await upstreamBook(sim, market)).timestamp).toISOString()),
      ),
  };
}
