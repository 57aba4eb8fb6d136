/**
 * @module relay/admission/group-streams
 * What one connection and one client address group (relay/admission/client-address.ts
 * `addressGroup`: an IPv4 address, an IPv6 prefix) hold of the streams that cost the most to start
 * and to keep (docs/operations.md "Isolation"): distinct `rest` paths, catalogue filters (`markets`)
 * and the streams of each channel that declares a bound (channels/relay-definition.ts
 * `GroupBound`), each bounded per connection and per group; the streams a group creates
 * (of any channel), at a bounded rate per group; and the `rest` paths and token filters upstream
 * has never answered for this relay, at a smaller rate per group, as unknown market ids are.
 *
 * Kept incrementally from the session's joins and leaves, so a check costs the size of the request,
 * never a walk over every stream: with ten thousand streams the relay must still answer quickly.
 */
import type { DefinedChannel } from '../../../packages/protocol/src/channels/registry.ts';
import type { Channel } from '../../../packages/protocol/src/protocol/messages.ts';
import { TokenBucket } from '../../upstream/rate-gate.ts';
import type { GroupBound } from '../channels/relay-definition.ts';
import {
  type ChannelGroupLimits,
  type IdGroupLimits,
  idBounds,
  relayChannels,
} from '../channels/relay-registry.ts';
import type { StreamSubscriber } from '../streams/stream.ts';

/** The bounds the channels with a folder of their own declare, by channel. */
export const channelGroupBounds: ReadonlyMap<Channel, GroupBound<ChannelGroupLimits>> = new Map(
  (Object.keys(relayChannels) as DefinedChannel[]).flatMap((channel) => {
    const { groupBound } = relayChannels[channel];
    return groupBound === undefined ? [] : [[channel, groupBound] as const];
  }),
);

type Bound = Pick<GroupBound<GroupLimits>, 'noun' | 'perConnection' | 'perAddress'>;
/** Every bound on a channel's distinct streams, by channel: the registry's on ids, then the declared. */
const bounds: ReadonlyMap<Channel, Bound> = new Map<Channel, Bound>([
  ...idBounds.map((bound) => [bound.channel, bound] as const),
  ...channelGroupBounds,
]);

/** The ids of these channels only a poll may confirm. */
const confirmedByPoll: ReadonlyMap<Channel, (id: string) => boolean> = new Map(
  idBounds.map(({ channel, unconfirmed }) => [channel, unconfirmed]),
);

export interface GroupLimits extends ChannelGroupLimits, IdGroupLimits {
  /** Streams nobody holds yet that one address group may create per second, every channel (burst: 4 s' worth, at least 200). */
  newStreamsPerSecondPerAddress: number;
  /** `rest` paths and token filters upstream has not answered yet, per second per address group (burst: 10 s' worth). */
  unconfirmedPathsPerSecondPerAddress: number;
}

export const defaultGroupLimits: GroupLimits = {
  ...boundDefaults(),
  newStreamsPerSecondPerAddress: 50,
  unconfirmedPathsPerSecondPerAddress: 5,
};

const NEW_STREAM_BURST_SECONDS = 4;
const NEW_STREAM_MIN_BURST = 200;
const UNCONFIRMED_BURST_SECONDS = 10;
/** Address groups remembered after their last connection left (their buckets), at most. */
const IDLE_GROUPS = 10_000;
/** Stream ids upstream answered, remembered at most (the oldest forgotten first). */
const CONFIRMED_IDS = 20_000;

/** The bounds' defaults, as the fields of the isolation limits they name. */
function boundDefaults(): ChannelGroupLimits & IdGroupLimits {
  const defaults = [...bounds.values()].flatMap(({ perConnection, perAddress }) => [
    [perConnection.field, perConnection.default],
    [perAddress.field, perAddress.default],
  ]);
  // Every field of ChannelGroupLimits and IdGroupLimits is one bound's.
  return Object.fromEntries(defaults) as ChannelGroupLimits & IdGroupLimits;
}

interface Group {
  connections: number;
  /** Per channel: stream id -> connections of the group holding it. */
  held: Map<Channel, Map<string, number>>;
  newStreams: TokenBucket;
  unconfirmed: TokenBucket;
}

interface Connection {
  group: Group;
  name: string | undefined;
  held: Map<Channel, Set<string>>;
}

function isBounded(channel: Channel): boolean {
  return bounds.has(channel);
}

export class GroupStreams {
  readonly #limits: GroupLimits;
  readonly #now: () => number;
  readonly #groups = new Map<string, Group>();
  /** Groups with no connection left, kept (oldest first) so that reconnecting does not refill their buckets. */
  readonly #idle = new Map<string, Group>();
  readonly #connections = new Map<StreamSubscriber, Connection>();
  readonly #confirmed = new Set<string>();

  constructor(limits: GroupLimits, now: () => number) {
    this.#limits = limits;
    this.#now = now;
  }

  /** A connection of address group `name` (undefined: a group of its own, as in tests and internal readers). */
  open(subscriber: StreamSubscriber, name: string | undefined): void {
    let group = name === undefined ? undefined : (this.#groups.get(name) ?? this.#idle.get(name));
    if (group === undefined) group = this.#newGroup();
    if (name !== undefined) {
      this.#idle.delete(name);
      this.#groups.set(name, group);
    }
    group.connections += 1;
    this.#connections.set(subscriber, { group, name, held: new Map() });
  }

  close(subscriber: StreamSubscriber): void {
    const connection = this.#connections.get(subscriber);
    if (connection === undefined) return;
    this.#connections.delete(subscriber);
    for (const [channel, ids] of connection.held)
      for (const id of ids) this.#release(connection, channel, id);
    const { group, name } = connection;
    if (--group.connections > 0 || name === undefined) return;
    this.#groups.delete(name);
    this.#idle.set(name, group);
    if (this.#idle.size > IDLE_GROUPS) this.#idle.delete(this.#idle.keys().next().value!);
  }

  /**
   * Whether a subscribe adding `added` (ids the connection does not hold yet) on `channel` stays within
   * the per-connection and per-group bounds; the refusal's message names the bound.
   */
  exceeds(subscriber: StreamSubscriber, channel: Channel, added: readonly string[]): string | undefined {
    const connection = this.#connections.get(subscriber);
    if (connection === undefined || !isBounded(channel) || added.length === 0) return undefined;
    const [perConnection, perGroup] = this.#bounds(channel);
    const own = connection.held.get(channel)?.size ?? 0;
    if (own + added.length > perConnection)
      return `at most ${perConnection} ${bounds.get(channel)?.noun} per connection`;
    const groupHeld = connection.group.held.get(channel);
    const newToGroup =
      groupHeld === undefined ? added.length : added.filter((id) => !groupHeld.has(id)).length;
    if ((groupHeld?.size ?? 0) + newToGroup > perGroup)
      return `at most ${perGroup} ${bounds.get(channel)?.noun} per client address`;
    return undefined;
  }

  /** What the connection holds of each bounded channel against its per-connection bound (`list`). */
  connectionUse(subscriber: StreamSubscriber): Record<string, { held: number; allowed: number }> {
    const held = this.#connections.get(subscriber)?.held;
    return Object.fromEntries(
      [...bounds.keys()].map((channel) => [
        channel,
        { held: held?.get(channel)?.size ?? 0, allowed: this.#bounds(channel)[0] },
      ]),
    );
  }

  /** The group's bucket of new streams (undefined for an unknown subscriber: not limited). */
  newStreams(subscriber: StreamSubscriber): TokenBucket | undefined {
    return this.#connections.get(subscriber)?.group.newStreams;
  }

  /**
   * The bucket a stream nobody holds yet takes a token from as well, when upstream has not answered
   * its id for this relay: a `rest` path or a token filter, from the group's unconfirmed tokens.
   */
  unconfirmed(subscriber: StreamSubscriber, channel: Channel, id: string): TokenBucket | undefined {
    if (!needsConfirmation(channel, id) || this.#confirmed.has(`${channel}:${id}`)) return undefined;
    return this.#connections.get(subscriber)?.group.unconfirmed;
  }

  /** Upstream answered the stream: joining or starting it again needs no unconfirmed token. */
  confirm(channel: Channel, id: string): void {
    if (!needsConfirmation(channel, id)) return;
    const key = `${channel}:${id}`;
    this.#confirmed.delete(key);
    this.#confirmed.add(key);
    if (this.#confirmed.size > CONFIRMED_IDS) this.#confirmed.delete(this.#confirmed.values().next().value!);
  }

  joined(subscriber: StreamSubscriber, channel: Channel, id: string): void {
    const connection = this.#connections.get(subscriber);
    if (connection === undefined || !isBounded(channel)) return;
    const own = connection.held.get(channel) ?? new Set<string>();
    connection.held.set(channel, own);
    if (own.has(id)) return;
    own.add(id);
    const group = connection.group.held.get(channel) ?? new Map<string, number>();
    connection.group.held.set(channel, group);
    group.set(id, (group.get(id) ?? 0) + 1);
  }

  left(subscriber: StreamSubscriber, channel: Channel, id: string): void {
    const connection = this.#connections.get(subscriber);
    if (connection === undefined || !isBounded(channel)) return;
    if (connection.held.get(channel)?.delete(id) === true) this.#release(connection, channel, id);
  }

  #release(connection: Connection, channel: Channel, id: string): void {
    const held = connection.group.held.get(channel);
    const count = held?.get(id);
    if (held === undefined || count === undefined) return;
    if (count > 1) held.set(id, count - 1);
    else held.delete(id);
  }

  #bounds(channel: Channel): [number, number] {
    const bound = bounds.get(channel);
    if (bound === undefined) return [Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY];
    return [this.#limits[bound.perConnection.field], this.#limits[bound.perAddress.field]];
  }

  #newGroup(): Group {
    const { newStreamsPerSecondPerAddress: newRate, unconfirmedPathsPerSecondPerAddress: unconfirmedRate } =
      this.#limits;
    return {
      connections: 0,
      held: new Map(),
      newStreams: new TokenBucket({
        ratePerSecond: newRate,
        capacity: Math.max(NEW_STREAM_MIN_BURST, newRate * NEW_STREAM_BURST_SECONDS),
        now: this.#now,
      }),
      unconfirmed: new TokenBucket({
        ratePerSecond: unconfirmedRate,
        capacity: unconfirmedRate * UNCONFIRMED_BURST_SECONDS,
        now: this.#now,
      }),
    };
  }
}

/**
 * Ids whose existence only a poll can tell, as their channel's bound says (any `rest` path, a
 * catalogue filter naming a token). One of a market's several streams is judged by its market, as
 * markets are.
 */
function needsConfirmation(channel: Channel, id: string): boolean {
  return confirmedByPoll.get(channel)?.(id) === true;
}
