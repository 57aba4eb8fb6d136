/**
 * Leases spread over the live relays (docs/cluster.md "How leases move"), on a Redis Cluster of three
 * primaries: with 30 books subscribed on every relay, each relay holds 5 to 15 of them, says so on
 * /health and /metrics, and each book is polled about once per interval for the cluster.
 */
import { describe, expect, it } from 'vitest';
import { BOOK_POLL_MS, MARKETS, useBalancedRelays } from '../support/balanced-relays.ts';
import { redisClusterAvailable } from '../support/redis.ts';
import { waitFor } from '../support/wait-for.ts';

describe.skipIf(!redisClusterAvailable())('leases spread over the relays', () => {
  const cluster = useBalancedRelays();

  it('gives each of three relays 5 to 15 of 30 books, each book polled about once per interval', async () => {
    for (let i = 0; i < 3; i += 1) await cluster.relayWithClient();
    await waitFor(
      'every relay to hold 5 to 15 book leases, 30 in all',
      () =>
        cluster.owned().every((count) => count >= 5 && count <= 15) &&
        cluster.owned().reduce((a, b) => a + b) === MARKETS,
      { timeoutMs: 15_000, everyMs: 50 },
    );
    // Each relay's shares of the leases and of poll CPU, as an operator sees them.
    await waitFor('every relay to report its lease and poll CPU shares', async () => {
      for (const relay of cluster.relays) {
        const { redis: cluster } = (await (await fetch(`${relay.url}/health`)).json()) as {
          redis: { relays: number; leaseShare: number; pollCpuShare: number };
        };
        const metrics = await (await fetch(`${relay.url}/metrics`)).text();
        const share = Number(/^market_relay_cluster_lease_share (\S+)$/m.exec(metrics)?.[1]);
        const cpuShare = Number(/^market_relay_cluster_poll_cpu_share (\S+)$/m.exec(metrics)?.[1]);
        if (cluster.relays !== 3 || cluster.leaseShare < 0.15 || cluster.leaseShare > 0.55) return false;
        // Every relay numbers polls of its books, none all of them.
        if (!(cluster.pollCpuShare > 0 && cluster.pollCpuShare < 1)) return false;
        expect(share).toBeCloseTo(cluster.leaseShare, 1);
        expect(cpuShare).toBeGreaterThan(0);
      }
      return true;
    });
    // Upstream's own log: book requests per market over a window of 2 s.
    const startedAt = Date.now();
    await waitFor('a window of 2 s', () => Date.now() - startedAt >= 2_000, { everyMs: 50 });
    const endedAt = Date.now();
    const polls = new Map<string, number>();
    for (const entry of cluster.sim.requests)
      if (entry.path === '/clob/orderbook' && entry.at >= startedAt && entry.at < endedAt) {
        const market = entry.query.market_id!;
        polls.set(market, (polls.get(market) ?? 0) + 1);
      }
    const intervals = (endedAt - startedAt) / BOOK_POLL_MS;
    const perInterval = [...polls.values()].map((count) => count / intervals);
    expect(polls.size).toBe(MARKETS);
    expect(Math.max(...perInterval)).toBeLessThanOrEqual(1.3);
    for (const client of cluster.clients) expect(client.violations).toEqual([]);
  });
});
