/**
 * @module bench/scenarios/cluster-spread
 * Cluster mode spreading the polling (docs/cluster.md "How leases move"): three relay processes on
 * one Redis, 300 markets whose books every relay has a client for. Once the leases have settled,
 * over a window: each relay's leases, its lease and poll CPU shares as it reports them on /health,
 * and its process CPU (from its /metrics).
 */

import { ProtocolClient } from '../../test/support/clients/protocol-client.ts';
import { type ChildRelay, startChildRelay } from '../../test/support/cluster/child-relay.ts';
import { startRedis } from '../../test/support/cluster/redis-server.ts';
import { waitFor } from '../../test/support/wait-for.ts';
import type { BenchOptions } from '../lib/options.ts';
import { progress, sleep } from '../lib/progress.ts';
import { startSim } from '../lib/servers.ts';

const RELAYS = 3;
const MARKETS = 300;
const POLL_MS = 1_000;
const SUBSCRIBE_CHUNK = 50;

export interface RelayShare {
  leases: number;
  leaseShare: number;
  pollCpuShare: number;
  /** The relay process's CPU over the window, as a fraction of one core. */
  cpu: number;
}

export interface ClusterSpreadResult {
  markets: number;
  pollMs: number;
  windowSeconds: number;
  relays: RelayShare[];
}

interface Health {
  redis: { relays: number; leaseShare: number; pollCpuShare: number; ownedTargets: number };
}

async function health(relay: ChildRelay): Promise<Health> {
  return (await (await fetch(`${relay.url}/health`)).json()) as Health;
}

async function cpuSeconds(relay: ChildRelay): Promise<number> {
  const metrics = await (await fetch(`${relay.url}/metrics`)).text();
  return Number(/^market_relay_process_cpu_seconds_total (\S+)$/m.exec(metrics)?.[1] ?? Number.NaN);
}

export async function runClusterSpread(options: BenchOptions): Promise<ClusterSpreadResult> {
  // The simulator's busy markets (books and prices moving) are about a third of all.
  const sim = await startSim(POLL_MS, 3 * MARKETS);
  const markets = sim.markets.slice(0, MARKETS);
  const redis = await startRedis();
  const relays: ChildRelay[] = [];
  const clients: ProtocolClient[] = [];
  try {
    relays.push(
      ...(await Promise.all(
        Array.from({ length: RELAYS }, () =>
          startChildRelay([
            `--upstream=${sim.url}`,
            `--redis=${redis.url}`,
            `--book-poll-ms=${POLL_MS}`,
            `--upstream-rps=${(10 * MARKETS * 1_000) / POLL_MS}`,
            '--rebalance-ms=1000',
            // One client subscribes all 300 at once: above the defaults for one connection.
            `--max-private-markets=${MARKETS}`,
            `--new-markets-per-second=${MARKETS}`,
          ]),
        ),
      )),
    );
    progress(`cluster spread: ${RELAYS} relays, ${MARKETS} books subscribed on each`);
    for (const relay of relays) {
      const client = await ProtocolClient.connect(relay.url);
      clients.push(client);
      for (let i = 0; i < markets.length; i += SUBSCRIBE_CHUNK) {
        await client.request({
          op: 'subscribe',
          channel: 'book',
          markets: markets.slice(i, i + SUBSCRIBE_CHUNK),
          depth: 10,
        });
      }
    }
    // Each relay's leases as it counts them (a lease key exists in Redis only between a holder's
    // renewal and its TTL, so sampling the keys undercounts).
    const leases = async (): Promise<number[]> =>
      (await Promise.all(relays.map(health))).map((status) => status.redis.ownedTargets);
    // Settled: every relay knows the others, and no lease moved for 3 s.
    await waitFor(
      'every relay to know the others',
      async () => (await Promise.all(relays.map(health))).every((status) => status.redis.relays === RELAYS),
      { timeoutMs: 60_000 },
    );
    let last = '';
    let since = Date.now();
    await waitFor(
      'the leases settled',
      async () => {
        const counts = await leases();
        const now = counts.join(' ');
        if (now !== last) [last, since] = [now, Date.now()];
        return Date.now() - since >= 3_000;
      },
      { timeoutMs: 120_000, everyMs: 500 },
    );
    const windowSeconds = options.quick ? 10 : 30;
    const cpuFrom = await Promise.all(relays.map(cpuSeconds));
    await sleep(windowSeconds * 1_000);
    const cpuTo = await Promise.all(relays.map(cpuSeconds));
    const [counts, reports] = [await leases(), await Promise.all(relays.map(health))];
    return {
      markets: markets.length,
      pollMs: POLL_MS,
      windowSeconds,
      relays: relays.map((_, i) => ({
        leases: counts[i]!,
        leaseShare: reports[i]!.redis.leaseShare,
        pollCpuShare: reports[i]!.redis.pollCpuShare,
        cpu: (cpuTo[i]! - cpuFrom[i]!) / windowSeconds,
      })),
    };
  } finally {
    for (const client of clients) await client.close();
    await Promise.all(relays.map((relay) => relay.stop('SIGKILL')));
    await redis.stop();
    await sim.child.stop();
  }
}
