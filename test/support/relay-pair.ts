/**
 * @module test/support/relay-pair
 * The fixture of the cluster tests of one channel (test/cluster/{catalogue,confirmed,rest}.test.ts):
 * a private Redis, a simulator that changes only when the test ticks it, and relay processes on both
 * with short intervals and leases, started per test and killed after it with their clients.
 */
import { afterEach, beforeAll } from 'vitest';
import { type SimulatorHandle, startSimulator } from '../../src/sim/server.ts';
import { type ChildRelay, startChildRelay } from './child-relay.ts';
import type { ProtocolClient } from './protocol-client.ts';
import { useRedis } from './redis.ts';

/** `relayArgs` are added to every relay's options (a channel's own interval, say). */
export function useRelayPair(relayArgs: string[] = []) {
  const redis = useRedis();
  let sim: SimulatorHandle;
  const relays: ChildRelay[] = [];
  const clients: ProtocolClient[] = [];
  beforeAll(async () => {
    // No ticks: the data changes only when the test says.
    sim = await startSimulator({ markets: 2, seed: 3, tickMs: 0 });
    return async () => {
      await sim.close();
    };
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
    await Promise.all(relays.splice(0).map((relay) => relay.stop('SIGKILL')));
  });

  async function relay(): Promise<ChildRelay> {
    const started = await startChildRelay([
      `--upstream=${sim.url}`,
      `--redis=${redis.server.url}`,
      '--book-poll-ms=50',
      '--price-poll-ms=50',
      '--upstream-rps=1000',
      '--lease-ms=600',
      ...relayArgs,
    ]);
    relays.push(started);
    return started;
  }

  return {
    get sim() {
      return sim;
    },
    /** Every client the current test opened, closed after it. */
    clients,
    /** Two relays of the cluster. */
    pair: () => Promise.all([relay(), relay()]),
  };
}
