/**
 * @module relay/coordination/redis/leases/roster
 * The roster of live relays in Redis (docs/cluster.md "How leases move"): each relay announces
 * itself, the leases it holds, its poll CPU, its weight and the format it writes every
 * `--rebalance-ms`, and reads back the live relays it spreads the leases over: those writing its own
 * format. A relay of a format this one does not read is counted (relay/coordination/redis/formats.ts).
 */

import type { RedisClient } from '../connection.ts';
import type { RedisFormats } from '../formats.ts';
import { FORMAT_KEY, POLL_CPU_KEY, ROSTER_KEY, WEIGHT_KEY } from '../keys.ts';
import { parseWeight } from './relay-weight.ts';

/** The relays alive as of the last announcement, the leases they hold and their poll CPU (µs/s). */
export interface Roster {
  relays: string[];
  /** Each live relay's weight in rendezvous hashing, as it announced it. */
  weights: Map<string, number>;
  leases: number;
  pollCpu: number;
  /** This relay's poll CPU as it announced it. */
  ownPollCpu: number;
}

export const NO_ROSTER: Roster = { relays: [], weights: new Map(), leases: 0, pollCpu: 0, ownPollCpu: 0 };

/** What a relay announces of itself. */
export interface Announcement {
  instanceId: string;
  leases: number;
  /** Poll CPU, µs per second. */
  pollCpu: number;
  weight: number;
  /** A relay silent this long is gone. */
  goneAfterMs: number;
}

/** Announces `own` and reads the live relays (relay/coordination/redis/stream-scripts.ts ANNOUNCE). */
export async function announce(
  redis: RedisClient,
  formats: RedisFormats,
  own: Announcement,
): Promise<Roster> {
  const [live, unread] = (await redis.relayAnnounce(
    4,
    ROSTER_KEY,
    POLL_CPU_KEY,
    WEIGHT_KEY,
    FORMAT_KEY,
    own.instanceId,
    String(own.leases),
    String(own.goneAfterMs),
    String(own.pollCpu),
    String(own.weight),
    String(formats.written.version),
    formats.readable('roster'),
  )) as [string[], number];
  formats.skip('roster', undefined, unread);
  const relays: string[] = [];
  const weights = new Map<string, number>();
  let leases = 0;
  let pollCpu = 0;
  for (let i = 0; i + 3 < live.length; i += 4) {
    relays.push(live[i]!);
    weights.set(live[i]!, parseWeight(live[i + 3]));
    leases += Number(live[i + 1]);
    pollCpu += Number(live[i + 2]) || 0;
  }
  return { relays: relays.sort(), weights, leases, pollCpu, ownPollCpu: own.pollCpu };
}

/** Leaves the roster at once (shutting down): the others take this relay's share at their next announcement. */
export async function leaveRoster(redis: RedisClient, instanceId: string): Promise<void> {
  for (const key of [ROSTER_KEY, POLL_CPU_KEY, WEIGHT_KEY, FORMAT_KEY])
    await redis.hdel(key, instanceId).catch(() => undefined);
}
