/**
 * The stream log against a private redis-server and a private Redis Cluster of three primaries: a poll's messages written once under the lease
 * (state, positions, history capped by length), read back for a new holder or a resume, and lease
 * fencing: a holder whose lease expired and moved (a paused process) cannot write any more, while
 * the new holder, with the next token, can.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openRedis, type RedisClient } from '../../../src/relay/coordination/redis/connection.ts';
import { RedisCoordinator } from '../../../src/relay/coordination/redis/coordinator.ts';
import { targetKeys } from '../../../src/relay/coordination/redis/keys.ts';
import type { WrittenEntry } from '../../../src/relay/coordination/redis/stream-batch.ts';
import { type RedisDeployment, redisDeployments, startRedisDeployment } from '../../support/cluster/redis.ts';
import { waitFor } from '../../support/wait-for.ts';

describe.each(redisDeployments())('stream log on %s redis', (kind) => {
  let redis: RedisDeployment;
  let inspector: RedisClient;
  const coordinators: RedisCoordinator[] = [];
  beforeAll(async () => {
    redis = await startRedisDeployment(kind);
    inspector = openRedis(redis.topology, { offlineQueue: true, lazyConnect: false });
  }, 20_000);
  afterAll(async () => {
    inspector.disconnect();
    await redis.stop();
  });
  afterEach(async () => {
    await Promise.all(coordinators.splice(0).map((coordinator) => coordinator.close()));
  });

  async function coordinator(): Promise<RedisCoordinator> {
    const created = new RedisCoordinator({ topology: redis.topology, historyLength: 5, historyMs: 60_000 });
    coordinators.push(created);
    await created.connect(2_000);
    return created;
  }

  const poll = (state: string | undefined) => ({ state, ts: 't', rts: 'r', receivedAt: 1 });
  const update = (seq: number): WrittenEntry => ({
    stream: 'full',
    epoch: 'e1',
    seq,
    kind: 'update',
    text: JSON.stringify({ seq }),
  });

  it('keeps the state, each position and a capped history, under one hash tag', async () => {
    const holder = await coordinator();
    expect(await holder.claim('book:s1', 5_000)).toBe(true);
    const reset: WrittenEntry = { stream: 'full', epoch: 'e1', seq: 1, kind: 'reset', text: '{}' };
    expect(await holder.log.commit('book:s1', poll('{"v":1}'), [reset])).toBe('written');
    for (let seq = 2; seq <= 40; seq++)
      expect(await holder.log.commit('book:s1', poll(`{"v":${seq}}`), [update(seq)])).toBe('written');
    const loaded = await holder.log.load('book:s1', [{ stream: 'full', afterSeq: 37 }]);
    expect(loaded?.stored).toMatchObject({ state: '{"v":40}', ts: 't', rts: 'r' });
    expect(loaded?.stored?.positions.get('full')).toEqual({ epoch: 'e1', seq: 40 });
    expect(loaded?.history.get('full')?.map(({ seq }) => seq)).toEqual([38, 39, 40]);
    // A poll that changed nothing keeps the times of the one that produced the state at seq 40.
    const confirm: WrittenEntry = { stream: 'full', epoch: 'e1', seq: 40, kind: 'confirm', text: undefined };
    const later = { state: undefined, ts: 't2', rts: 'r2', receivedAt: 2 };
    expect(await holder.log.commit('book:s1', later, [confirm])).toBe('written');
    const confirmed = await holder.log.load('book:s1', []);
    expect(confirmed?.stored).toMatchObject({ state: '{"v":40}', ts: 't', rts: 'r' });
    // MAXLEN ~ trims in whole nodes: the history stays near its length, never grows with the stream.
    expect(await inspector.xlen(targetKeys('book:s1').history('full'))).toBeLessThan(40);
    const keys = await inspector.keys('market-relay:*book:s1*');
    expect(keys.every((key) => key.includes('{book:s1}'))).toBe(true);
  });

  it('fences a holder whose lease moved on: its writes are refused, the new holder continues', async () => {
    const [paused, next] = [await coordinator(), await coordinator()];
    expect(await paused.claim('book:f1', 150)).toBe(true);
    const first = paused.log.token('book:f1')!;
    expect(await paused.log.commit('book:f1', poll('{"v":1}'), [update(1)])).toBe('written');

    // The paused holder stops renewing; its lease expires and the next relay takes it.
    await waitFor('the lease to move', () => next.claim('book:f1', 5_000), { everyMs: 25 });
    expect(next.log.token('book:f1')).toBeGreaterThan(first);

    // Waking up, the old holder still believes it holds the lease: every write of it is refused.
    expect(paused.log.token('book:f1')).toBe(first);
    expect(await paused.log.commit('book:f1', poll('{"v":"stale"}'), [update(2)])).toBe('fenced');
    expect(await paused.log.close('book:f1', ['full'])).toBe('fenced');
    const afterFenced = await next.log.load('book:f1', [{ stream: 'full', afterSeq: 0 }]);
    expect(afterFenced?.stored).toMatchObject({ state: '{"v":1}', token: first });
    expect(afterFenced?.history.get('full')?.map(({ seq }) => seq)).toEqual([1]);

    expect(await next.log.commit('book:f1', poll('{"v":2}'), [update(2)])).toBe('written');
    const loaded = await next.log.load('book:f1', [{ stream: 'full', afterSeq: 0 }]);
    expect(loaded?.stored?.token).toBe(next.log.token('book:f1'));
    expect(loaded?.history.get('full')?.map(({ seq }) => seq)).toEqual([1, 2]);
  });

  it('starts a stream over when its epoch is reset, and says so when Redis is away', async () => {
    const holder = await coordinator();
    await holder.claim('price:r1', 5_000);
    await holder.log.commit('price:r1', poll('{}'), [{ ...update(7), stream: 'price' }]);
    const reset: WrittenEntry = { stream: 'price', epoch: 'e2', seq: 1, kind: 'reset', text: '{}' };
    await holder.log.commit('price:r1', poll('{}'), [reset]);
    const loaded = await holder.log.load('price:r1', [{ stream: 'price', afterSeq: 0 }]);
    expect(loaded?.stored?.positions.get('price')).toEqual({ epoch: 'e2', seq: 1 });
    expect(loaded?.history.get('price')).toEqual([]);

    const lonely = new RedisCoordinator({ topology: { kind: 'single', url: 'redis://127.0.0.1:1' } });
    coordinators.push(lonely);
    await lonely.connect(300);
    expect(await lonely.claim('price:r1', 1_000)).toBe(true); // polls without a lease...
    expect(lonely.log.token('price:r1')).toBeUndefined(); // ...so it has nothing to write with
    expect(await lonely.log.commit('price:r1', poll('{}'), [])).toBe('unavailable');
    expect(await lonely.log.load('price:r1', [])).toBeUndefined();
  });
});
