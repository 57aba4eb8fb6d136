/**
 * What a relay reads of values in other formats (docs/cluster.md "Upgrades"), on a private Redis
 * and a Redis Cluster: the untagged values of the release before versions (format 1: a lease
 * `<instance> <token>`, a state and history entries without `format`, a payload after the bare
 * instance) read as its own, and a payload, state or history entry of a format it does not know
 * skipped and counted, never delivered or continued from.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openRedis, type RedisClient } from '../../../src/relay/coordination/redis/connection.ts';
import { RedisCoordinator } from '../../../src/relay/coordination/redis/coordinator.ts';
import { targetKeys } from '../../../src/relay/coordination/redis/keys.ts';
import { type RedisDeployment, redisDeployments, startRedisDeployment } from '../../support/cluster/redis.ts';
import { waitFor } from '../../support/wait-for.ts';

describe.each(redisDeployments())('values of other formats on %s redis', (kind) => {
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

  /** A target's state and one history entry as a relay wrote them: untagged, or in `format`. */
  async function stored(target: string, format?: string): Promise<void> {
    const keys = targetKeys(target);
    const tag = format === undefined ? [] : ['format', format];
    await inspector.hset(
      keys.state,
      'state',
      '{"v":3}',
      'ts',
      't',
      'rts',
      'r',
      'token',
      '7',
      'full',
      'e0 3',
      ...tag,
    );
    await inspector.xadd(keys.history('full'), '*', 'seq', '3', 'msg', '{"seq":3}', ...tag);
  }

  it('reads what the release before versions wrote as its own', async () => {
    const relay = await coordinator();
    const keys = targetKeys('book:old');
    await inspector.set(keys.lease, 'oldrelay 7', 'PX', 5_000);
    await stored('book:old');
    // Another relay's lease, whatever its format: not taken.
    expect(await relay.claim('book:old', 5_000)).toBe(false);
    const loaded = await relay.log.load('book:old', [{ stream: 'full', afterSeq: 2 }]);
    expect(loaded?.unreadable).toBe(false);
    expect(loaded?.stored).toMatchObject({ token: 7, state: '{"v":3}', ownFormat: false });
    expect(loaded?.stored?.positions.get('full')).toEqual({ epoch: 'e0', seq: 3 });
    expect(loaded?.history.get('full')).toEqual([{ seq: 3, text: '{"seq":3}' }]);

    const seen: string[] = [];
    relay.follow('book:old', (payload) => seen.push(payload));
    await waitFor('an untagged payload delivered', async () => {
      await inspector.spublish(keys.channel, 'oldrelay {"token":7}');
      return seen.length > 0;
    });
    expect(seen[0]).toBe('{"token":7}');
    expect(relay.formats.skipped().size).toBe(0);

    // Its own lease, once the old one is gone, carries its format.
    await inspector.del(keys.lease);
    expect(await relay.claim('book:old', 5_000)).toBe(true);
    expect(await inspector.get(keys.lease)).toBe(`${relay.instanceId} ${relay.log.token('book:old')} 2`);
  });

  it('skips a payload, a state and history entries of a format it does not read, and counts them', async () => {
    const relay = await coordinator();
    const keys = targetKeys('book:new');
    await stored('book:new', '3');
    const loaded = await relay.log.load('book:new', [{ stream: 'full', afterSeq: 2 }]);
    expect(loaded).toMatchObject({ stored: undefined, unreadable: true });
    expect(loaded?.history.get('full')).toEqual([]);

    const seen: string[] = [];
    relay.follow('book:new', (payload) => seen.push(payload));
    await waitFor('a payload of the next format counted', async () => {
      await inspector.spublish(keys.channel, 'newrelay:3 eyJ0b2tlbiI6N30=');
      return (relay.formats.skipped().get('message') ?? 0) > 0;
    });
    expect(seen).toEqual([]);
    expect(relay.formats.skipped().get('state')).toBe(1);
    expect(relay.formats.skipped().get('history')).toBe(1);
  });
});
