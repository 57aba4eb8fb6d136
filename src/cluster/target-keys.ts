/**
 * @module cluster/target-keys
 * Every Redis name of one poll target (`book:<market>`, `price:<market>`) carries the hash tag
 * `{<target>}`, so all of them (lease, fencing counter, stream state, histories, messages channel)
 * live in one hash slot: one shard of a Redis Cluster holds a target whole, its Lua scripts touch
 * keys of that slot only, and its sharded channel (SPUBLISH) is served by that same shard.
 */

const PREFIX = 'market-relay:';

export interface TargetKeys {
  /** `<instance> <token>` of the relay holding the lease, with a TTL. */
  lease: string;
  /** The lease's fencing counter: incremented each time the lease changes hands. */
  fence: string;
  /** Hash: the target's last state, its `ts`/`rts`, the token that wrote it, each stream's position. */
  state: string;
  /** Sharded pub/sub channel of the messages the holder writes. */
  channel: string;
  /** Redis Stream of one stream's recent updates (for resume). */
  history(stream: string): string;
}

export function targetKeys(target: string): TargetKeys {
  const tagged = `${PREFIX}{${target}}:`;
  return {
    lease: `${tagged}lease`,
    fence: `${tagged}fence`,
    state: `${tagged}state`,
    channel: `${tagged}messages`,
    history: (stream) => `${tagged}history:${stream}`,
  };
}
