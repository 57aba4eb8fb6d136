/**
 * @module relay/coordination/recording/redis-lease-table
 * The recording leases in the cluster's Redis (./lease-table.ts): one key per stream
 * (redis/keys.ts `recordingLeaseKey`) holding its holder's name with a TTL, taken, renewed and let
 * go by a script each, so that no other relay's lease is ever renewed or deleted.
 */
import type { RedisClient } from '../redis/connection.ts';
import { recordingLeaseKey } from '../redis/keys.ts';
import type { LeaseTable } from './lease-table.ts';

/** KEYS[1] the lease; ARGV[1] the holder, ARGV[2] the TTL (ms). 1: held by ARGV[1] now. */
const HOLD = `
local holder = redis.call('GET', KEYS[1])
if holder == false then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
`;

/** KEYS[1] the lease; ARGV[1] the holder. */
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0
`;

export class RedisLeaseTable implements LeaseTable {
  readonly holder: string;
  readonly #redis: RedisClient;

  constructor(redis: RedisClient, holder: string) {
    this.#redis = redis;
    this.holder = holder;
  }

  async hold(key: string, ttlMs: number): Promise<boolean> {
    const held = await this.#redis.eval(
      HOLD,
      1,
      recordingLeaseKey(key),
      this.holder,
      String(Math.ceil(ttlMs)),
    );
    return held === 1;
  }

  async release(key: string): Promise<void> {
    await this.#redis.eval(RELEASE, 1, recordingLeaseKey(key), this.holder);
  }
}
