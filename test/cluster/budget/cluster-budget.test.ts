/**
 * One upstream budget for the cluster, end to end: three relays on one Redis and the simulator,
 * clients spread over the three, each relay polling markets of its own. Upstream's own request log
 * shows the cluster within `--upstream-rps` (three relays on their own budgets would each spend
 * it), within the relays' last shares while Redis is stopped, and within it again once Redis is
 * back. Counts over a window are checked against bounds with generous margins for its edges.
 */

import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RedisBroker } from '../../../src/relay/coordination/redis/broker.ts';
import { type Relay, startRelay } from '../../../src/relay-server.ts';
import { type SimulatorHandle, startSimulator } from '../../../src/sim/server.ts';
import { ProtocolClient } from '../../support/clients/protocol-client.ts';
import { redisAvailable, useRedis } from '../../support/cluster/redis.ts';
import { waitFor } from '../../support/wait-for.ts';

const RPS = 40;
const MARKETS_PER_RELAY = 8;
/** Each count's window: its bound (the budget over it plus a burst) is still well below three budgets'. */
const WINDOW_MS = 1_500;

describe.skipIf(!redisAvailable())('one upstream budget for the cluster', () => {
  const redis = useRedis();
  const relays: Relay[] = [];
  const clients: ProtocolClient[] = [];
  let sim: SimulatorHandle;
  beforeAll(async () => {
    sim = await startSimulator({ markets: 3 * MARKETS_PER_RELAY, seed: 5, tickMs: 0 });
  });
  // Registered after useRedis's, so it runs first: relays close while Redis is still there.
  afterAll(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
    await Promise.all(relays.splice(0).map((relay) => relay.close()));
    await sim.close();
  });

  async function relay(): Promise<Relay> {
    const started = await startRelay(
      {
        port: 0,
        host: '127.0.0.1',
        upstream: sim.url,
        redis: redis.server.url,
        // Far more polls than the budget allows: each relay alone would spend all of it.
        bookPollMs: 10,
        pricePollMs: 10,
        upstreamConcurrency: 8,
        upstreamRps: RPS,
        failOpenRpsFraction: 0.5,
        logLevel: 'silent',
        simMarkets: 1,
        simSeed: 1,
        tuning: { heartbeatMs: 60_000 },
      },
      pino({ level: 'silent' }),
    );
    relays.push(started);
    return started;
  }

  /** Upstream requests the simulator served over the next `ms`, and the seconds that really took. */
  async function upstreamRequestsOver(ms: number): Promise<{ requests: number; seconds: number }> {
    const startedAt = Date.now();
    const until = startedAt + ms;
    await waitFor(`${ms} ms to pass`, () => Date.now() >= until, { timeoutMs: ms + 5_000, everyMs: 50 });
    const endedAt = Date.now();
    const requests = sim.requests.filter((entry) => entry.at >= startedAt && entry.at < endedAt).length;
    return { requests, seconds: (endedAt - startedAt) / 1000 };
  }

  const budgetOf = (of: Relay) => (of.broker as RedisBroker).budget!.status();

  it('holds the cluster to --upstream-rps with Redis, to the last shares without it, and again after a restart', async () => {
    const trio = [await relay(), await relay(), await relay()];
    const ids = sim.market.marketIds();
    for (const [index, of] of trio.entries()) {
      const client = await ProtocolClient.connect(of.url);
      clients.push(client);
      const markets = ids.slice(index * MARKETS_PER_RELAY, (index + 1) * MARKETS_PER_RELAY);
      await client.request({ op: 'subscribe', channel: 'book', markets });
      await client.request({ op: 'subscribe', channel: 'price', markets });
      await waitFor('snapshots', () => markets.every((market) => client.view('book', market)));
    }
    await waitFor("each relay polling its own clients' markets", () =>
      trio.every((of) => of.broker.status().owned === 2 * MARKETS_PER_RELAY),
    );
    // While the relays' spending ramps up, each computes its share from a different moment and the
    // shares may add up to more than the budget: wait until each has learnt one from its spending
    // and they add up to about the budget. Not equal shares: the relays take tokens from one bucket
    // as they come, and on a busy machine one of three in this process settles at 0.15.
    const shares = () => trio.map((of) => budgetOf(of).share ?? 0);
    await waitFor(
      'every relay to learn a share of what the cluster spends',
      () => shares().every((share) => share > 0) && shares().reduce((sum, share) => sum + share) <= 1.1,
    );

    const shared = await upstreamRequestsOver(WINDOW_MS);
    // Three relays on their own budgets would make about 3 x RPS; one budget, RPS plus its burst.
    expect(shared.requests).toBeLessThanOrEqual(RPS * shared.seconds * 1.25 + RPS);
    expect(shared.requests).toBeGreaterThan(RPS * shared.seconds * 0.25);

    // Each relay reports its share, on /metrics and on /health.
    const text = await (await fetch(`${trio[0]!.url}/metrics`)).text();
    const share = Number(/^market_relay_upstream_budget_share (\S+)$/m.exec(text)?.[1]);
    expect(share).toBeGreaterThan(0);
    expect(share).toBeLessThanOrEqual(1);
    expect(await (await fetch(`${trio[1]!.url}/health`)).json()).toMatchObject({
      redis: { connected: true, budget: { rps: RPS, share: expect.any(Number), failOpen: false } },
    });

    await redis.server.stop();
    await waitFor('every relay to fail open', () => trio.every((of) => budgetOf(of).failOpen));
    await waitFor('every relay to poll for itself', () => trio.every((of) => !of.broker.status().connected));
    const bound = trio.reduce((sum, of) => sum + budgetOf(of).failOpenRps, 0);
    expect(bound).toBeLessThanOrEqual(RPS * 1.2); // the last shares, not three whole budgets
    const alone = await upstreamRequestsOver(WINDOW_MS);
    // Each relay's fallback bucket starts full: one second of its share as a burst.
    expect(alone.requests).toBeLessThanOrEqual(bound * alone.seconds * 1.25 + bound);
    expect(alone.requests).toBeGreaterThan(0);
    expect(await (await fetch(`${trio[2]!.url}/health`)).json()).toMatchObject({
      status: 'ok',
      redis: { connected: false, budget: { failOpen: true } },
    });

    await redis.start();
    await waitFor(
      'every relay back on Redis',
      () => trio.every((of) => !budgetOf(of).failOpen && of.broker.status().connected),
      { timeoutMs: 15_000 },
    );
    const again = await upstreamRequestsOver(WINDOW_MS);
    expect(again.requests).toBeLessThanOrEqual(RPS * again.seconds * 1.25 + RPS);
    expect(again.requests).toBeGreaterThan(RPS * again.seconds * 0.25);
    for (const client of clients) expect(client.violations).toEqual([]);
  }, 60_000);
});
