/**
 * @module relay/coordination/redis/keys
 * Every key the relay builds, in one place, so that two modules that must agree on a name build it
 * the same way (a stream's map key, which the client SDK builds too, is the wire package's
 * channels/stream-key.ts):
 * - a poll target's key (`bookTargetKey`, `priceTargetKey`, `numberedTargetKey`, `streamTargetKey`): what the poller
 *   schedules, what a cluster leases, and what the target's Redis names are tagged with;
 * - the Redis names of one poll target (`targetKeys`);
 * - a stream's recording lease (`recordingLeaseKey`).
 */

import { type NumberedChannel, numberedChannels } from '../../channels/relay-registry.ts';

/** One market's order book: every depth of its `book` streams and the streams served from the same book. */
export function bookTargetKey(market: string): string {
  return numberedTargetKey(numberedChannels.book.channel, market);
}

/** One market's price, polled in batches of up to 100 markets. */
export function priceTargetKey(market: string): string {
  return numberedTargetKey(numberedChannels.price.channel, market);
}

/** One market's target of a numbered channel (relay/coordination/codecs.ts), by the channel's name. */
export function numberedTargetKey(channel: NumberedChannel, market: string): string {
  return `${channel}:${market}`;
}

/** The streams of one (channel, stream id) of a channel polled one request each. */
export function streamTargetKey(channel: string, id: string): string {
  return `${channel}:${id}`;
}

const PREFIX = 'market-relay:';

/**
 * Every Redis name of one poll target (`book:<market>`, `price:<market>`) carries the hash tag
 * `{<target>}`, so all of them (lease, fencing counter, stream state, histories, messages channel)
 * live in one hash slot: one shard of a Redis Cluster holds a target whole, its Lua scripts touch
 * keys of that slot only, and its sharded channel (SPUBLISH) is served by that same shard.
 */
export interface TargetKeys {
  /** `<instance> <token>` of the relay holding the lease, with a TTL. */
  lease: string;
  /** The relay that should hold the lease and asked for it (relay/coordination/redis/leases/rendezvous.ts), for a lease TTL. */
  want: string;
  /** A follower that reads the holder's shared responses (relay/coordination/redis/share-demand.ts), for a lease TTL. */
  asked: string;
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
    want: `${tagged}want`,
    asked: `${tagged}share-asked`,
    fence: `${tagged}fence`,
    state: `${tagged}state`,
    channel: `${tagged}messages`,
    history: (stream) => `${tagged}history:${stream}`,
  };
}

/** Every live relay, with the leases it holds (one slot, one shard of a Redis Cluster). */
export const ROSTER_KEY = `${PREFIX}{relays}:live`;
/** Each live relay's poll CPU, beside the roster (the same slot). */
export const POLL_CPU_KEY = `${PREFIX}{relays}:poll-cpu`;
/** Each live relay's weight in rendezvous hashing (relay/coordination/redis/leases/relay-weight.ts), beside the roster. */
export const WEIGHT_KEY = `${PREFIX}{relays}:weight`;
/** The format each live relay writes (relay/coordination/redis/formats.ts), beside the roster. */
export const FORMAT_KEY = `${PREFIX}{relays}:format`;

/**
 * The recording lease of one stream a relay numbers itself (relay/coordination/recording/), by the
 * stream's key: `<holder>` with a TTL, alone in its slot.
 */
export function recordingLeaseKey(stream: string): string {
  return `${PREFIX}{record:${stream}}:lease`;
}
