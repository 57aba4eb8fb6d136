/**
 * Leases spread over the live relays (docs/cluster.md "How leases move"), on a Redis Cluster of three
 * primaries: with every book subscribed on every relay, each relay holds exactly the books rendezvous
 * hashing names it for, says so on /health and /metrics, and each book is polled about once per
 * interval for the cluster. The relays' poll CPU, measured once the split stands, shows on both too.
 */
import { describe, expect, it } from 'vitest';
import { BOOK_POLL_MS, MARKETS, useBalancedRelays } from '../../support/cluster/balanced-relays.ts';
import { redisClusterAvailable } from '../../support/cluster/redis.ts';
import { waitFor } from '../../support/wait-for.ts';

interface ClusterHealth {
  relays: number;
  leaseShare: number;
  pollCpuShare: number;
  ownedTargets: number;
}

describe.skipIf(!redisClusterAvailable())('leases spread over the relays', () => {
  const cluster = useBalancedRelays();
  const scrape = async (url: string) => {
    const { redis } = (await (await fetch(`${url}/health`)).json()) as { redis: ClusterHealth };
    const metrics = await (await fetch(`${url}/metrics`)).text();
    const metric = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(metrics)?.[1]);
    return {
      health: redis,
      leaseShare: metric('market_relay_cluster_lease_share'),
      cpuShare: metric('market_relay_cluster_poll_cpu_share'),
    };
  };

  it('gives each of three relays the books rendezvous hashing names, each book polled about once per interval', async () => {
    for (let i = 0; i < 3; i += 1) await cluster.relayWithClient();
    await cluster.evenSplit('every relay to hold the books rendezvous hashing names it for, every book held');
    // Each relay's share of the leases, as an operator sees it.
    const expected = cluster.expectedOwned();
    await waitFor('every relay to report its lease share', async () => {
      for (const [i, relay] of cluster.relays.entries()) {
        const { health, leaseShare } = await scrape(relay.url);
        if (health.relays !== 3 || health.ownedTargets !== expected[i]) return false;
        if (Math.abs(health.leaseShare - expected[i]! / MARKETS) > 1e-9) return false;
        expect(leaseShare).toBeCloseTo(health.leaseShare, 3);
      }
      return true;
    });

    // Upstream's own log: book requests per market over at least 10 intervals, until every book
    // was polled in it (however late a loaded machine polls).
    const startedAt = Date.now();
    const booksPolledSince = (since: number) =>
      new Set(
        cluster.sim.requests
          .filter((entry) => entry.path === '/clob/orderbook' && entry.at >= since)
          .map((entry) => entry.query.market_id),
      ).size;
    await waitFor(
      'every book polled over a window of at least 10 intervals',
      () => Date.now() - startedAt >= 10 * BOOK_POLL_MS && booksPolledSince(startedAt) === MARKETS,
      { everyMs: 50 },
    );
    const endedAt = Date.now();
    const polls = new Map<string, number>();
    for (const entry of cluster.sim.requests)
      if (entry.path === '/clob/orderbook' && entry.at >= startedAt && entry.at < endedAt) {
        const market = entry.query.market_id!;
        polls.set(market, (polls.get(market) ?? 0) + 1);
      }
    const intervals = (endedAt - startedAt) / BOOK_POLL_MS;
    const perInterval = [...polls.values()].map((count) => count / intervals);
    // A book polled by two relays would be near 2; a late poll only lowers the count.
    expect(Math.max(...perInterval)).toBeLessThanOrEqual(1.3);

    // Each relay's share of the poll CPU: every relay numbers polls of its books, none all of them.
    // A share covers one announcement period, in which a loaded machine may leave a relay without
    // a poll: each relay is to show a share on both /health and /metrics once.
    cluster.measureCosts(true);
    const reported = new Set<number>();
    await waitFor('every relay to report its poll CPU share', async () => {
      for (const [i, relay] of cluster.relays.entries()) {
        const { health, cpuShare } = await scrape(relay.url);
        if (health.pollCpuShare > 0 && health.pollCpuShare < 1 && cpuShare > 0 && cpuShare < 1)
          reported.add(i);
      }
      return reported.size === cluster.relays.length;
    });
    for (const client of cluster.clients) expect(client.violations).toEqual([]);
  });
});
