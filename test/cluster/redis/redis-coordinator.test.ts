/**
 * The Redis coordinator against a private redis-server and a private Redis Cluster of three primaries: leases (take, renew, hand over, expire),
 * writes reaching followers but not their writer, and failing open when Redis is away.
 */
import { Cluster, type Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openRedis } from '../../../src/relay/coordination/redis/connection.ts';
import { RedisCoordinator } from '../../../src/relay/coordination/redis/coordinator.ts';
import { targetKeys } from '../../../src/relay/coordination/redis/keys.ts';
import type { OutageSummary } from '../../../src/relay/coordination/redis/outage-errors.ts';
import { UNASKED_SHARE_MS } from '../../../src/relay/coordination/redis/share-demand.ts';
import {
  type RedisDeployment,
  redisDeployments,
  startRedis,
  startRedisDeployment,
} from '../../support/cluster/redis.ts';
import { waitFor } from '../../support/wait-for.ts';

describe.each(redisDeployments())('RedisCoordinator on %s redis', (kind) => {
  let redis: RedisDeployment;
  const coordinators: RedisCoordinator[] = [];
  beforeAll(async () => {
    redis = await startRedisDeployment(kind);
  }, 20_000);
  afterAll(async () => {
    await redis.stop();
  });
  afterEach(async () => {
    await Promise.all(coordinators.splice(0).map((coordinator) => coordinator.close()));
  });

  async function coordinator(): Promise<RedisCoordinator> {
    const created = new RedisCoordinator({ topology: redis.topology });
    coordinators.push(created);
    expect(await created.connect(5_000)).toBe(true);
    return created;
  }

  it('gives a lease to one relay at a time and hands it over on release', async () => {
    const [a, b] = [await coordinator(), await coordinator()];
    expect(await a.claim('book:m1', 5_000)).toBe(true);
    expect(await b.claim('book:m1', 5_000)).toBe(false);
    expect(await a.claim('book:m1', 5_000)).toBe(true); // renewal
    expect(await b.claim('book:m2', 5_000)).toBe(true); // leases are per target
    expect(a.status()).toMatchObject({ mode: 'redis', connected: true, owned: 1 });
    await a.release('book:m1');
    expect(await b.claim('book:m1', 5_000)).toBe(true);
    expect(await a.claim('book:m1', 5_000)).toBe(false);
  });

  it('lets a lease expire when its holder stops renewing (a relay that died)', async () => {
    const [a, b] = [await coordinator(), await coordinator()];
    expect(await a.claim('price:m1', 150)).toBe(true);
    expect(await b.claim('price:m1', 150)).toBe(false);
    await waitFor('the lease to expire', async () => b.claim('price:m1', 150), { everyMs: 25 });
    expect(await a.claim('price:m1', 150)).toBe(false);
  });

  it('tells the holder at its claims whether a follower reads its shared responses, for one lease TTL', async () => {
    const [holder, follower] = [await coordinator(), await coordinator()];
    const demand = holder.shareDemand;
    expect(await holder.claim('book:s1', 150)).toBe(true);
    // Nobody asked: shared once, then not again for a while.
    expect(demand.shareNow('book:s1', 0)).toBe(true);
    expect(demand.shareNow('book:s1', 10)).toBe(false);
    expect(demand.shareNow('book:s1', UNASKED_SHARE_MS)).toBe(true);
    expect(await follower.claim('book:s1', 150, true)).toBe(false);
    expect(await holder.claim('book:s1', 150)).toBe(true);
    expect(demand.shareNow('book:s1', UNASKED_SHARE_MS + 1)).toBe(true);
    expect(demand.shareNow('book:s1', UNASKED_SHARE_MS + 2)).toBe(true);
    // The follower's word lapses once it stops asking; the holder renews meanwhile.
    expect(await follower.claim('book:s1', 150, false)).toBe(false);
    await waitFor(
      'the holder to learn that nobody reads them any more',
      async () => {
        expect(await holder.claim('book:s1', 150)).toBe(true);
        return !demand.shareNow('book:s1', UNASKED_SHARE_MS + 3);
      },
      { everyMs: 25 },
    );
  });

  it('releases every held lease on close', async () => {
    const a = await coordinator();
    const b = await coordinator();
    await a.claim('book:x', 60_000);
    await a.claim('price:y', 60_000);
    await a.close();
    expect(await b.claim('book:x', 60_000)).toBe(true);
    expect(await b.claim('price:y', 60_000)).toBe(true);
  });

  it("delivers the holder's writes to followers of that target only, never back to the writer", async () => {
    const [a, b, c] = [await coordinator(), await coordinator(), await coordinator()];
    const seen: Record<string, string[]> = { a: [], b: [], c: [] };
    a.follow('book:m1', (payload) => seen.a!.push(payload));
    b.follow('book:m1', (payload) => seen.b!.push(payload));
    c.follow('book:m2', (payload) => seen.c!.push(payload));
    expect(await a.claim('book:m1', 5_000)).toBe(true);
    const write = (ts: string) =>
      a.log.commit('book:m1', { state: undefined, ts, rts: ts, receivedAt: 1 }, []);
    await waitFor('subscriptions', async () => {
      await write('probe');
      return seen.b!.length > 0;
    });
    await write('one');
    await write('two');
    const written = () =>
      seen.b!.map((payload) => (JSON.parse(payload) as { ts: string }).ts).filter((ts) => ts !== 'probe');
    await waitFor('two writes', () => written().length === 2);
    expect(written()).toEqual(['one', 'two']); // in order
    expect(seen.a).toEqual([]);
    expect(seen.c).toEqual([]);
    b.unfollow('book:m1');
    expect(b.status().followed).toBe(0);
  });

  it('leases and delivers every target, wherever its slot lives (every shard of a cluster)', async () => {
    const [a, b] = [await coordinator(), await coordinator()];
    const targets = Array.from({ length: 24 }, (_, i) => `book:spread-${i}`);
    const seen = new Map<string, number>();
    for (const target of targets) {
      b.follow(target, () => seen.set(target, (seen.get(target) ?? 0) + 1));
      expect(await a.claim(target, 5_000)).toBe(true);
      expect(await b.claim(target, 5_000)).toBe(false);
    }
    await waitFor('a write of every target to reach its follower', async () => {
      for (const target of targets)
        if (!seen.has(target))
          expect(await a.log.commit(target, { state: '{}', ts: 't', rts: 't', receivedAt: 1 }, [])).toBe(
            'written',
          );
      return seen.size === targets.length;
    });
    const loaded = await b.log.load(targets[5]!, []);
    expect(loaded?.stored).toMatchObject({ state: '{}', ts: 't' });
  });

  it('keeps the fencing counter of a target that came and went two lease TTLs, and a counter gone starts above every token', async () => {
    const admin = openRedis(redis.topology, { offlineQueue: true, lazyConnect: false });
    try {
      const [a, b] = [await coordinator(), await coordinator()];
      const tokenOf = async (target: string) =>
        Number((await admin.get(targetKeys(target).lease))?.split(' ')[1]);
      // Markets that expired, a REST path and a candle series asked once: each leased, handed over, let go.
      const targets = ['book:gone-1', 'price:gone-1', 'rest:/v1/markets?offset=40', 'candles:gone-1:1h:mid'];
      for (const target of targets) {
        expect(await a.claim(target, 5_000)).toBe(true);
        await a.release(target);
        expect(await b.claim(target, 5_000)).toBe(true);
        const handedOver = await tokenOf(target);
        await b.release(target);
        // Hand-overs in a row count on from the counter.
        expect(await a.claim(target, 5_000)).toBe(true);
        expect(await tokenOf(target)).toBe(handedOver + 1);
        await a.release(target);
      }
      // Whatever --history-ms keeps of a target's state: the counter goes two leases after its last token.
      for (const target of targets) {
        const ttl = await admin.pttl(targetKeys(target).fence);
        expect(ttl).toBeGreaterThan(9_000);
        expect(ttl).toBeLessThanOrEqual(10_000);
      }
      const longer = new RedisCoordinator({ topology: redis.topology, historyMs: 30 * 60_000 });
      coordinators.push(longer);
      expect(await longer.connect(5_000)).toBe(true);
      expect(await longer.claim('book:kept-longer', 5_000)).toBe(true);
      expect(await admin.pttl(targetKeys('book:kept-longer').fence)).toBeLessThanOrEqual(10_000);

      // The counter expired while a relay held its token (a holder paused past its lease): the next
      // holder's token is still higher, so the paused one stays fenced.
      expect(await a.claim('book:gone-1', 5_000)).toBe(true);
      const before = await tokenOf('book:gone-1');
      await admin.del(targetKeys('book:gone-1').fence, targetKeys('book:gone-1').lease);
      expect(await b.claim('book:gone-1', 5_000)).toBe(true);
      expect(await tokenOf('book:gone-1')).toBeGreaterThan(before);
      expect(await a.log.commit('book:gone-1', { state: '{}', ts: 't', rts: 't', receivedAt: 1 }, [])).toBe(
        'fenced',
      );
    } finally {
      admin.disconnect();
    }
  });

  it('sends each script once per connection, then runs it by its SHA1, and sends it again when Redis forgot it', async () => {
    const admin = openRedis(redis.topology, { offlineQueue: true, lazyConnect: false });
    try {
      await admin.ping();
      const nodes = (): Redis[] => (admin instanceof Cluster ? admin.nodes('master') : [admin]);
      const calls = async (command: 'eval' | 'evalsha') => {
        let total = 0;
        for (const node of nodes()) {
          const stats = await node.info('commandstats');
          total += Number(new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(stats)?.[1] ?? 0);
        }
        return total;
      };
      const a = await coordinator();
      expect(await a.claim('book:scripted', 5_000)).toBe(true);
      await Promise.all(nodes().map((node) => node.config('RESETSTAT')));
      for (let renewal = 0; renewal < 5; renewal += 1)
        expect(await a.claim('book:scripted', 5_000)).toBe(true);
      expect(await calls('evalsha')).toBeGreaterThanOrEqual(5);
      expect(await calls('eval')).toBe(0);
      await Promise.all(nodes().map((node) => node.script('FLUSH')));
      expect(await a.claim('book:scripted', 5_000)).toBe(true); // NOSCRIPT, then the text again
      expect(await calls('eval')).toBeGreaterThanOrEqual(1);
    } finally {
      admin.disconnect();
    }
  });

  it.runIf(kind === 'single')(
    'fails open when Redis is unreachable: every claim answers "poll it yourself"',
    async () => {
      const lonely = new RedisCoordinator({ topology: { kind: 'single', url: 'redis://127.0.0.1:1' } });
      coordinators.push(lonely);
      expect(await lonely.connect(500)).toBe(false);
      expect(await lonely.claim('book:m1', 1_000)).toBe(true);
      expect(lonely.status()).toMatchObject({ connected: false, lastError: expect.any(String) });
    },
  );

  it.runIf(kind === 'single')(
    'reports each distinct error of an outage once, counts them, and clears lastError on recovery',
    async () => {
      let own = await startRedis();
      const reported: string[] = [];
      const recoveries: OutageSummary[] = [];
      const watched = new RedisCoordinator({
        topology: { kind: 'single', url: own.url },
        onError: (error) => reported.push(error.message),
        onRecover: (summary) => recoveries.push(summary),
      });
      coordinators.push(watched);
      try {
        expect(await watched.connect(2_000)).toBe(true);
        await own.stop();
        await waitFor('the outage to be noticed', () => !watched.status().connected);
        for (let attempt = 0; attempt < 50; attempt += 1)
          expect(await watched.claim('book:m1', 1_000)).toBe(true);
        expect(watched.status().lastError).toEqual(expect.any(String));
        expect(new Set(reported).size).toBe(reported.length); // never the same message twice
        expect(reported.length).toBeLessThan(10);

        own = await startRedis(own.port);
        await waitFor('recovery', () => watched.status().connected && recoveries.length > 0, {
          timeoutMs: 15_000,
        });
        expect(watched.status().lastError).toBeUndefined();
        expect(recoveries).toHaveLength(1);
        const counted = recoveries[0]!.errors.reduce((sum, { count }) => sum + count, 0);
        expect(counted).toBeGreaterThanOrEqual(50); // every failed claim, though few lines were logged
        expect(recoveries[0]!.errors.map(({ message }) => message).sort()).toEqual([...reported].sort());
      } finally {
        await own.stop();
      }
    },
  );
});
