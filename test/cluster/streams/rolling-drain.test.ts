/**
 * The mechanism of `npm run bench -- rolling-restart` at a small size (test/support/cluster/rolling-drain.ts):
 * three relay processes on one private Redis, 60 plain WebSocket clients that ignore `going_away` and
 * reconnect at once to the next relay whenever their socket closes, and 6 SDK clients. Each relay in
 * turn gets SIGTERM (a drain), exits 0 within `--drain-ms` + 5 s and is replaced at its address.
 * Because the drain spreads its closes over the window, no relay receives more than a fifth of the
 * clients in any one second; every SDK client resumes without a gap, and the cluster's upstream
 * requests stay within its budget in every second.
 */
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { type Relay, startRelay } from '../../../src/relay-server.ts';
import { type SimulatorHandle, startSimulator } from '../../../src/sim/server.ts';
import { type ChildRelay, startChildRelay } from '../../support/cluster/child-relay.ts';
import { redisAvailable, useRedis } from '../../support/cluster/redis.ts';
import { busiestSecond, ClientFleet, rollingRestart } from '../../support/cluster/rolling-drain.ts';

/**
 * Each relay's `--drain-ms`, in the order they restart. The last holds every client by then (each
 * moved on to the next relay) and sends them all over the default window: 66 clients over its first
 * 8.5 s is 7.8 a second, against the bound of 13.2, with room for a busy machine's bunching (an 8 s
 * window failed under load). The first two hold a third and two thirds of them, and send them at
 * about the same rate over shorter windows.
 */
const DRAIN_MS = [4_000, 7_000, 10_000];
const UPSTREAM_RPS = 60;
const PLAIN_CLIENTS = 60;
const SDK_CLIENTS = 6;
/** Every client connects from 127.0.0.1: the per-address edge limits would refuse a move. */
const EDGE = {
  maxConnectionsPerAddress: 100_000,
  connectionsPerSecondPerAddress: 100_000,
  connectionBurstPerAddress: 100_000,
  maxPendingPerAddress: 100_000,
};

describe.skipIf(!redisAvailable())('a rolling restart of draining relays', () => {
  const redis = useRedis();
  let sim: SimulatorHandle | undefined;
  const children: ChildRelay[] = [];
  const replacements: Relay[] = [];
  let fleet: ClientFleet | undefined;
  afterAll(async () => {
    await fleet?.close();
    await Promise.all(children.map((child) => child.stop('SIGKILL')));
    await Promise.all(replacements.map((relay) => relay.close()));
    await sim?.close();
  });

  it('spreads the moving clients: at most a fifth of them on one relay in any second, no gap, within budget', async () => {
    sim = await startSimulator({ markets: 8, seed: 4, tickMs: 100 });
    const markets = sim.market.activeMarketIds().slice(0, 4);
    const args = [
      `--upstream=${sim.url}`,
      `--redis=${redis.server.url}`,
      '--book-poll-ms=200',
      '--price-poll-ms=200',
      `--upstream-rps=${UPSTREAM_RPS}`,
      '--lease-ms=1000',
      '--max-connections-per-address=100000',
      '--connection-rate-per-address=100000',
      '--connection-burst-per-address=100000',
      '--max-pending-per-address=100000',
      '--log-level=warn',
    ];
    children.push(
      ...(await Promise.all(DRAIN_MS.map((drainMs) => startChildRelay([...args, `--drain-ms=${drainMs}`])))),
    );
    const urls = children.map((child) => child.url);
    fleet = new ClientFleet(urls);
    await fleet.place(PLAIN_CLIENTS, SDK_CLIENTS, markets);
    sim.clearRequests();

    const figures = await rollingRestart(
      {
        urls,
        async stop(index) {
          await children[index]!.stop('SIGTERM');
          return children[index]!.process.exitCode;
        },
        // The replacements are never stopped: in this process, which costs no process start.
        async replace(index) {
          replacements.push(
            await startRelay(
              {
                port: Number(new URL(urls[index]!).port),
                host: '127.0.0.1',
                upstream: sim!.url,
                redis: redis.server.url,
                bookPollMs: 200,
                pricePollMs: 200,
                upstreamConcurrency: 16,
                upstreamRps: UPSTREAM_RPS,
                logLevel: 'silent',
                simMarkets: 8,
                simSeed: 4,
                tuning: { drainMs: DRAIN_MS[index]!, leaseMs: 1_000, edge: EDGE },
              },
              pino({ level: 'silent' }),
            ),
          );
        },
      },
      fleet,
      30_000,
    );

    expect(figures.stops.map((stop) => stop.exitCode)).toEqual([0, 0, 0]);
    for (const stop of figures.stops) expect(stop.stopMs).toBeLessThan(DRAIN_MS[stop.relay]! + 5_000);
    for (const most of figures.busiestSecondByRelay) expect(most).toBeLessThanOrEqual(fleet.clients / 5);
    // Every relay took clients over: the counts above are of real moves.
    for (const most of figures.busiestSecondByRelay) expect(most).toBeGreaterThan(0);
    expect(figures.sdkWithGap).toBe(0);
    expect(busiestSecond(sim.requests.map((request) => request.at))).toBeLessThanOrEqual(UPSTREAM_RPS);
  }, 120_000);
});
