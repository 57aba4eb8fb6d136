/**
 * @module test/support/cluster/shared-history
 * The fixture of the shared history tests (test/cluster/streams/shared-history*.test.ts): a private
 * Redis, a private PostgreSQL and the simulator for the file, and relay processes recording into the
 * one PostgreSQL, killed after each test (what they recorded is read with ./history-reads.ts).
 */
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { targetKeys } from '../../../src/relay/coordination/redis/keys.ts';
import { type SimulatorHandle, type SimulatorOptions, startSimulator } from '../../../src/sim/server.ts';
import { type PostgresServer, startPostgres } from '../postgres-server.ts';
import { waitFor } from '../wait-for.ts';
import { type ChildRelay, startChildRelay } from './child-relay.ts';
import { useRedis } from './redis.ts';

/**
 * Redis, PostgreSQL and the simulator for the calling file (with `simulator`'s options beside the
 * fixture's); relays and sockets for each test.
 */
export function useSharedHistory(simulator: SimulatorOptions = {}) {
  const redis = useRedis();
  let postgres: PostgresServer;
  let sim: SimulatorHandle;
  const relays: ChildRelay[] = [];
  const sockets: { close(): void }[] = [];
  beforeAll(async () => {
    [postgres, sim] = await Promise.all([
      startPostgres(),
      startSimulator({ markets: 3, seed: 48, tickMs: 40, ...simulator }),
    ]);
  }, 60_000);
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.close();
    await Promise.all(relays.splice(0).map((relay) => relay.stop('SIGKILL')));
  });
  afterAll(async () => {
    await sim?.close();
    await postgres?.remove();
  });

  /** A relay of the cluster, with `extra` flags besides the fixture's. */
  async function relay(extra: readonly string[] = []): Promise<ChildRelay> {
    const started = await startChildRelay([
      ...extra,
      `--upstream=${sim.url}`,
      `--redis=${redis.server.url}`,
      `--history=${postgres.url}`,
      '--book-poll-ms=50',
      '--price-poll-ms=50',
      '--upstream-rps=1000',
      '--lease-ms=600',
    ]);
    relays.push(started);
    return started;
  }

  async function holderOf(trio: ChildRelay[], market: string): Promise<number> {
    const inspector = new Redis(redis.server.url);
    try {
      const lease = await waitFor(
        'a lease holder',
        async () => (await inspector.get(targetKeys(`book:${market}`).lease)) ?? undefined,
      );
      const instances = await Promise.all(trio.map((at) => at.instance()));
      return instances.findIndex((instance) => lease.startsWith(`${instance} `));
    } finally {
      inspector.disconnect();
    }
  }

  return {
    relay,
    holderOf,
    sockets,
    get postgres() {
      return postgres;
    },
    get sim() {
      return sim;
    },
    get redisUrl() {
      return redis.server.url;
    },
  };
}
