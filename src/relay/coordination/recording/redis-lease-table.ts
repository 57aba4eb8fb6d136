/**
 * @module relay/coordination/recording/redis-lease-table
 * The recording leases in the cluster's Redis (./lease-table.ts): one key per stream
 * (redis/keys.ts `recordingLeaseKey`) holding its holder's name with a TTL, taken, renewed and let
 * go by a script each (./lease-scripts.ts, commands of the connection: redis/scripts.ts), so that
 * no other relay's lease is ever renewed or deleted.
 */
import type { RedisClient } from '../redis/connection.ts';
import { recordingLeaseKey } from '../redis/keys.ts';
import type { LeaseTable } from './lease-table.ts';

export class RedisLeaseTable implements LeaseTable {
  readonly holder: string;
  readonly #redis: RedisClient;

  constructor(redis: RedisClient, holder: string) {
    this.#redis = redis;
    this.holder = holder;
  }

  async hold(key: string, ttlMs: number): Promise<boolean> {
    const held = await this.#redis.relayHoldRecording(
      1,
      recordingLeaseKey(key),
      this.holder,
      String(Math.ceil(ttlMs)),
    );
    return held === 1;
  }

  async release(key: string): Promise<void> {
    await this.#redis.relayReleaseRecording(1, recordingLeaseKey(key), this.holder);
  }
}
