/**
 * @module test/support/cluster/relay-processes
 * Relay processes (`market-relay serve`, so they can be stopped with SIGTERM or killed) on a private
 * Redis and the simulator, with short intervals and leases, for the cluster tests that start relays
 * as programs: the simulator and Redis serve the file's tests; each test's relays and clients are
 * killed and closed after it.
 */
import pino from 'pino';
import { afterEach, beforeAll } from 'vitest';
import { parseCommandLine } from '../../../src/config/config.ts';
import { type Relay, startRelay } from '../../../src/relay-server.ts';
import { type SimulatorHandle, type SimulatorOptions, startSimulator } from '../../../src/sim/server.ts';
import type { ProtocolClient } from '../clients/protocol-client.ts';
import { type ChildRelay, startChildRelay } from './child-relay.ts';
import { useRedis } from './redis.ts';

export interface RelayProcessOptions {
  /** By default 2 markets that change only when the test ticks the simulator. */
  sim?: SimulatorOptions;
  /** Added to every relay's options (a channel's own interval, say). */
  relayArgs?: string[];
}

export function useRelayProcesses({
  sim: simOptions = { markets: 2, seed: 3, tickMs: 0 },
  relayArgs = [],
}: RelayProcessOptions = {}) {
  const redis = useRedis();
  let sim: SimulatorHandle;
  const relays: ChildRelay[] = [];
  const inProcess: Relay[] = [];
  const clients: ProtocolClient[] = [];
  beforeAll(async () => {
    sim = await startSimulator(simOptions);
    return async () => {
      await sim.close();
    };
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
    await Promise.all(relays.splice(0).map((relay) => relay.stop('SIGKILL')));
    await Promise.all(inProcess.splice(0).map((relay) => relay.close()));
  });

  const args = () => [
    `--upstream=${sim.url}`,
    `--redis=${redis.server.url}`,
    '--book-poll-ms=50',
    '--price-poll-ms=50',
    '--upstream-rps=1000',
    '--lease-ms=600',
    // SIGTERM drains its clients over this long (docs/operations.md "Shutdown"): short in a test.
    '--drain-ms=300',
    ...relayArgs,
  ];

  async function relay(): Promise<ChildRelay> {
    const started = await startChildRelay(args());
    relays.push(started);
    return started;
  }

  /**
   * The same relay (the same options) in this process: for a relay the test never stops or kills,
   * which then costs no process start (on a busy machine, a start is the larger part of such a test).
   */
  async function inProcessRelay(): Promise<Relay> {
    // Records nothing, as the child relays (which inherit the suite's HISTORY=off) do.
    const command = parseCommandLine(
      ['serve', '--port=0', '--log-level=silent', '--history=off', ...args()],
      {},
    );
    if (command.command !== 'serve') throw new Error('expected the serve command');
    const started = await startRelay(command.config, pino({ level: 'silent' }));
    inProcess.push(started);
    return started;
  }

  return {
    redis,
    get sim() {
      return sim;
    },
    /** Every client the current test opened, closed after it. */
    clients,
    relay,
    inProcessRelay,
    /** Two relays of the cluster. */
    pair: () => Promise.all([relay(), relay()]),
  };
}
