/**
 * Two relays of one cluster in this process, on a private Redis and one quiet simulator (no trades
 * of its own: a test prints them): started per test, closed after it with the test's clients. And
 * the wait until both relays know each other and every target's lease sits with the relay
 * rendezvous hashing picks for it, after which a lease moves only if a relay leaves.
 */
import { Redis } from 'ioredis';
import { afterEach } from 'vitest';
import { RedisBroker } from '../../../src/relay/coordination/redis/broker.ts';
import { targetKeys } from '../../../src/relay/coordination/redis/keys.ts';
import { preferredRelay } from '../../../src/relay/coordination/redis/leases/rendezvous.ts';
import type { Relay } from '../../../src/relay-server.ts';
import type { SimulatorProfileName } from '../../../src/sim/profile.ts';
import { type SimulatorHandle, startSimulator } from '../../../src/sim/server.ts';
import type { ProtocolClient } from '../clients/protocol-client.ts';
import { startHarnessRelay } from '../harness.ts';
import { waitFor } from '../wait-for.ts';
import { useRedis } from './redis.ts';

export interface RelayPair {
  sim: SimulatorHandle;
  relays: [Relay, Relay];
}

export interface RelayPairFixture {
  /** Starts the simulator and two relays on it; `relays` holds them, and a test may close one early. */
  start(profile?: SimulatorProfileName): Promise<RelayPair>;
  /** The relays still to close after the test. */
  readonly relays: Relay[];
  /** The test's clients, closed after it. */
  readonly clients: ProtocolClient[];
  leasesSettled(pair: Relay[], targets: string[]): Promise<void>;
}

const instanceOf = (of: Relay): string => {
  if (!(of.broker instanceof RedisBroker)) throw new Error('not in cluster mode');
  return of.broker.coordinator.instanceId;
};

export function useRelayPair(): RelayPairFixture {
  const redis = useRedis();
  let sim: SimulatorHandle | undefined;
  const relays: Relay[] = [];
  const clients: ProtocolClient[] = [];

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
    await Promise.all(relays.splice(0).map((relay) => relay.close()));
    await sim?.close();
    sim = undefined;
  });

  return {
    relays,
    clients,
    async start(profile) {
      sim = await startSimulator({ markets: 3, seed: 3, tickMs: 0, tradeFlow: () => undefined, profile });
      // Intervals a busy test machine keeps within three times over (a follower is judged by them
      // too). Relays announce themselves every 500 ms: they find each other within a second, and a
      // relay leaves the roster (moving its leases) only after 1.5 s without announcing.
      const options = {
        redis: redis.server.url,
        bookPollMs: 250,
        pricePollMs: 250,
        simMarkets: 3,
        simSeed: 3,
        tuning: { rebalanceMs: 500 },
      };
      const pair: [Relay, Relay] = [
        await startHarnessRelay(sim, options),
        await startHarnessRelay(sim, options),
      ];
      relays.push(...pair);
      return { sim, relays: pair };
    },
    async leasesSettled(pair, targets) {
      const instances = pair.map(instanceOf).sort();
      const inspector = new Redis(redis.server.url);
      try {
        await waitFor('both relays in the roster and every lease with its preferred relay', async () => {
          if (!pair.every((of) => of.broker.status().relays === pair.length)) return false;
          const holders = await Promise.all(targets.map((target) => inspector.get(targetKeys(target).lease)));
          return targets.every((target, i) =>
            holders[i]?.startsWith(`${preferredRelay(target, instances)} `),
          );
        });
      } finally {
        inspector.disconnect();
      }
    },
  };
}
