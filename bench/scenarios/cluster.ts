/**
 * @module bench/scenarios/cluster
 * Cluster mode under a rolling restart: three relay processes (`market-relay serve`, each stopped
 * with SIGTERM and replaced in turn, as a deploy does), clients spread over them, each reconnecting
 * to the next relay and resuming every stream, as the client SDK does. Counted: snapshots sent
 * again to resuming clients, resumes recovered, seq gaps, and the upstream requests of the whole
 * cluster (the simulator's request log), with one Redis (cluster-wide streams) and, for
 * comparison, three relays without Redis (each numbers its own streams and polls for itself).
 */

import { type ChildRelay, startChildRelay } from '../../test/support/cluster/child-relay.ts';
import { startRedis } from '../../test/support/cluster/redis-server.ts';
import { waitFor } from '../../test/support/wait-for.ts';
import type { BenchOptions } from '../lib/options.ts';
import { progress, sleep } from '../lib/progress.ts';
import { type ResumeCounts, ResumingClient, type Selection, sumCounts } from '../lib/resuming-clients.ts';
import type { Simulator } from '../lib/servers.ts';

const RELAYS = 3;
const POLL_MS = 250;
const UPSTREAM_RPS = 200;
const MARKETS = 24;
const MARKETS_PER_CLIENT = 4;

export interface ClusterRun {
  mode: 'redis' | 'no redis';
  clients: number;
  streams: number;
  counts: ResumeCounts;
  /** Upstream requests per second of the three relays together: steady, and during the restart. */
  steadyRequestsPerSec: number;
  restartRequestsPerSec: number;
  restartSeconds: number;
}

export interface ClusterResult {
  pollMs: number;
  runs: ClusterRun[];
}

async function upstreamRequests(sim: Simulator): Promise<number> {
  return (await sim.child.request<{ total: number }>('requests')).total;
}

async function runOnce(options: BenchOptions, sim: Simulator, withRedis: boolean): Promise<ClusterRun> {
  const redis = withRedis ? await startRedis() : undefined;
  const args = [
    `--upstream=${sim.url}`,
    `--book-poll-ms=${POLL_MS}`,
    `--price-poll-ms=${POLL_MS}`,
    `--upstream-rps=${UPSTREAM_RPS}`,
    '--lease-ms=1000',
    // Every client closed at once on SIGTERM, as before drains (the figures of 2026-11-23 compare);
    // `npm run bench -- rolling-restart` is the drain's own scenario.
    '--drain-ms=0',
    // Every client connects from 127.0.0.1: the per-address edge limits would refuse a move.
    '--max-connections-per-address=100000',
    '--connection-rate-per-address=100000',
    '--connection-burst-per-address=100000',
    '--max-pending-per-address=100000',
    ...(redis === undefined ? [] : [`--redis=${redis.url}`]),
  ];
  const relays: ChildRelay[] = await Promise.all(Array.from({ length: RELAYS }, () => startChildRelay(args)));
  const perRelay = options.quick ? 20 : 100;
  const markets = sim.markets.slice(0, MARKETS);
  const clients = Array.from({ length: perRelay * RELAYS }, (_, i) => {
    const mine = Array.from({ length: MARKETS_PER_CLIENT }, (_, k) => markets[(i + k) % markets.length]!);
    const selections: Selection[] = [
      { channel: 'book', markets: mine, depth: 10 },
      { channel: 'price', markets: mine },
    ];
    return new ResumingClient(selections);
  });
  const where = clients.map((_, i) => i % RELAYS);
  try {
    await Promise.all(clients.map((client, i) => client.connect(relays[where[i]!]!.url)));
    await waitFor('every first snapshot', () => clients.every((client) => client.ready), {
      timeoutMs: 60_000,
    });
    await sleep(options.warmupMs);
    const steadyFrom = await upstreamRequests(sim);
    const steadyStarted = Date.now();
    await sleep(options.quick ? 2_000 : 5_000);
    const steadyRequestsPerSec =
      ((await upstreamRequests(sim)) - steadyFrom) / ((Date.now() - steadyStarted) / 1000);

    progress(
      `cluster (${withRedis ? 'redis' : 'no redis'}): rolling restart of ${RELAYS} relays, ${clients.length} clients`,
    );
    const restartFrom = await upstreamRequests(sim);
    const restartStarted = Date.now();
    for (let i = 0; i < RELAYS; i++) {
      await relays[i]!.stop('SIGTERM');
      const replacement = startChildRelay(args);
      const next = (i + 1) % RELAYS;
      const moving = clients.filter((_, c) => where[c] === i);
      await waitFor('clients to see their relay go', () => moving.every((client) => client.closed));
      for (const c of where.keys()) if (where[c] === i) where[c] = next;
      await Promise.all(moving.map((client) => client.connect(relays[next]!.url)));
      await waitFor('resumes answered', () => moving.every((client) => client.subscribed), {
        timeoutMs: 30_000,
      });
      relays[i] = await replacement;
      await sleep(1_000);
    }
    const restartSeconds = (Date.now() - restartStarted) / 1000;
    const restartRequestsPerSec = ((await upstreamRequests(sim)) - restartFrom) / restartSeconds;
    await sleep(1_000);
    return {
      mode: withRedis ? 'redis' : 'no redis',
      clients: clients.length,
      streams: clients.length * MARKETS_PER_CLIENT * 2,
      counts: sumCounts(clients),
      steadyRequestsPerSec,
      restartRequestsPerSec,
      restartSeconds,
    };
  } finally {
    for (const client of clients) client.close();
    await Promise.all(relays.map((relay) => relay.stop('SIGKILL')));
    await redis?.stop();
  }
}

export async function runCluster(options: BenchOptions, sim: Simulator): Promise<ClusterResult> {
  const runs = [await runOnce(options, sim, true), await runOnce(options, sim, false)];
  return { pollMs: POLL_MS, runs };
}
