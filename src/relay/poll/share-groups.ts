/**
 * @module relay/poll/share-groups
 * The upstream budget shared by who asks, not by how many streams they hold (docs/scheduler.md
 * "Fair share"). Every poll target is held by share groups — client address groups (an IPv6
 * address by its prefix) or API keys, as the relay wires them; a target nobody holds (lingering
 * after its last subscriber left, the change-hint map) is the relay's own. Each upstream request
 * (a poll, and every further page a poll reads) is paid by the holders of its target, `1/k` each
 * when `k` groups hold it, and the next request goes to the group that has paid least so far:
 * start-time fair queueing, each group's virtual time advanced by what it paid, an idle group
 * brought up to the current virtual time when it asks again (no credit banked while idle). So every
 * group that asks gets an equal share of the polling rate whatever the number of targets it holds,
 * a group asking more than its share gets its own targets asked less often, never its
 * neighbours', and a share a group does not use goes to the others.
 *
 * Within a group the scheduler ranks its targets as before (relay/poll/scheduler.ts): due for their
 * maximum age first, then by the freshness a request buys. That ranking walks the group's targets,
 * so a group's candidates are ranked again at most every `targets x RESCAN_MS_PER_TARGET` (at most
 * `MAX_RESCAN_MS`): a group of a few targets is ranked on every turn, exactly as before, and one of
 * ten thousand costs a walk every few tens of milliseconds, never one per request. A ranking keeps as
 * many candidates as the turn has slots for, and one whose every place was taken is followed at once
 * by another: however many came due, a turn starts as many as it has slots for.
 *
 * Who holds each target is kept here too (`HolderChanges`): the share
 * groups of the subscribers of the streams its request serves, each counted once. A subscriber
 * counts as its owner (`ownerOf`: its API key or its client address group, as the relay wires it).
 * Kept up to date by stream id as subscribers come and go, never by a walk over every target:
 * the changes since the last turn are applied before the dispatcher chooses again, at most every
 * HOLDERS_REFRESH_MS for one stream id.
 */
import type { Channel } from '../../../packages/protocol/src/protocol/messages.ts';
import type { AnyStream, StreamSubscriber } from '../streams/stream.ts';
import { pickTargets, rankOf, type SchedulerMode, type TargetView } from './scheduler.ts';

/** A target as the share groups see it: its timing, and who holds it. */
export interface SharedTarget<K = string> extends TargetView<K> {
  /** The share groups holding it (none: only the relay, e.g. while it lingers). */
  readonly holders?: ReadonlySet<unknown>;
}

/** The relay's own group: targets no client holds. */
export const RELAY_GROUP = 'relay';
const RELAY_HOLDS: ReadonlySet<unknown> = new Set([RELAY_GROUP]);

/** Candidates kept per ranking of a group at least: enough for its requests until the next ranking. */
const CANDIDATES = 8;
const RESCAN_MS_PER_TARGET = 0.005;
const MAX_RESCAN_MS = 100;
/** Requests per second per group are measured over about this long (exponential decay). */
const USAGE_WINDOW_MS = 10_000;

interface Group<K, T extends SharedTarget<K>> {
  readonly id: unknown;
  /** Start-time fair queueing: what the group paid, in requests, from when it last became busy. */
  virtual: number;
  readonly targets: Map<K, T>;
  candidates: T[];
  rankedAt: number;
  /** The last ranking found CANDIDATES to ask: more may have been due beyond them. */
  rankedFull: boolean;
  /** Requests paid, decayed over USAGE_WINDOW_MS, as of `usageAt`. */
  usage: number;
  usageAt: number;
}

/** One group's use of the budget, as metrics and the status page show it. */
export interface GroupShare {
  group: unknown;
  /** Poll targets it holds (alone or with others). */
  targets: number;
  /** Upstream requests per second it paid for, over the last few seconds. */
  requestsPerSecond: number;
  /** Its part (0..1) of what every group paid over the same time. */
  share: number;
}

export class ShareGroups<K, T extends SharedTarget<K>> {
  readonly #groups = new Map<unknown, Group<K, T>>();
  /**
   * Target key -> the target filed and the groups it is filed in: a group holds the target's key in
   * its `targets` exactly while it is one of these.
   */
  readonly #filed = new Map<K, { target: T; groups: Group<K, T>[] }>();
  /** The virtual time of the last request started: where a group that becomes busy starts. */
  #virtual = 0;

  /** Groups holding at least one target. */
  get size(): number {
    return this.#groups.size;
  }

  /**
   * Files `target` under its holders (again: its holders may have changed). Only the groups that
   * came or went are touched: a target held by hundreds of groups (a wildcard's streams) is placed
   * again on every turn one of its subscribers comes or goes, and refiling it whole walked every
   * holder's map several times on each of those turns. A group that still holds the target keeps
   * its place and what it paid. The target's groups are changed in place, not made again: a copy of
   * its hundreds of holders on each of those turns was the largest part of what the relay allocated
   * for the budget (issue 51). They stay an array, not a map by id (a few times its size for each of
   * the targets hundreds hold): whether a group is filed already, its own `targets` tells.
   */
  place(target: T, now: number): void {
    const wanted = target.holders !== undefined && target.holders.size > 0 ? target.holders : RELAY_HOLDS;
    let filed = this.#filed.get(target.key);
    if (filed === undefined) {
      filed = { target, groups: [] };
      this.#filed.set(target.key, filed);
    }
    // The same key may come back as another object (a target made again): groups must hold that one.
    const remade = filed.target !== target;
    filed.target = target;
    const { groups } = filed;
    let kept = 0;
    for (const group of groups) {
      if (!wanted.has(group.id)) {
        this.#leave(group, target.key);
        continue;
      }
      if (remade) group.targets.set(target.key, target);
      groups[kept++] = group;
    }
    groups.length = kept;
    for (const id of wanted) {
      if (this.#groups.get(id)?.targets.has(target.key) === true) continue;
      const group = this.#group(id, now);
      group.targets.set(target.key, target);
      groups.push(group);
    }
  }

  remove(key: K): void {
    const filed = this.#filed.get(key);
    if (filed === undefined) return;
    for (const group of filed.groups) this.#leave(group, key);
    this.#filed.delete(key);
  }

  /**
   * Up to `slots` targets to ask now: each time, the best candidate of the group that has paid
   * least, which then pays for it (with the target's other holders).
   */
  pick(now: number, slots: number, mode: SchedulerMode): T[] {
    const picked: T[] = [];
    const taken = new Set<K>();
    while (picked.length < slots) {
      let best: Group<K, T> | undefined;
      let bestStart = Number.POSITIVE_INFINITY;
      for (const group of this.#groups.values()) {
        const start = Math.max(group.virtual, this.#virtual);
        const wanted = slots - picked.length;
        if (start >= bestStart || this.#next(group, now, mode, taken, wanted) === undefined) continue;
        best = group;
        bestStart = start;
      }
      if (best === undefined) break;
      const target = best.candidates.shift()!;
      taken.add(target.key);
      picked.push(target);
      this.#virtual = bestStart;
      this.charge(target, now);
    }
    return picked;
  }

  /**
   * One upstream request for `target` (a poll, or one more page of it): its holders pay for it.
   * `requests` -1: a request charged that never went upstream (another relay's lease) is given back.
   */
  charge(target: T, now: number, requests = 1): void {
    const groups = this.#filed.get(target.key)?.groups;
    if (groups === undefined) return;
    const part = requests / groups.length;
    for (const group of groups) {
      group.virtual = requests > 0 ? Math.max(group.virtual, this.#virtual) + part : group.virtual + part;
      decay(group, now);
      group.usage = Math.max(0, group.usage + part);
    }
  }

  /** Every group's use of the budget, most first. */
  shares(now: number): GroupShare[] {
    let total = 0;
    for (const group of this.#groups.values()) {
      decay(group, now);
      total += group.usage;
    }
    const perSecond = 1000 / USAGE_WINDOW_MS;
    return [...this.#groups.values()]
      .map((group) => ({
        group: group.id,
        targets: group.targets.size,
        requestsPerSecond: group.usage * perSecond,
        share: total > 0 ? group.usage / total : 0,
      }))
      .sort((a, b) => b.requestsPerSecond - a.requestsPerSecond || b.targets - a.targets);
  }

  /**
   * The group's best candidate that may be asked now, ranking its targets again when due: for as
   * many as the turn still has slots for (CANDIDATES at least), so a turn walks a group about once.
   */
  #next(
    group: Group<K, T>,
    now: number,
    mode: SchedulerMode,
    taken: ReadonlySet<K>,
    wanted: number,
  ): T | undefined {
    const eligible = (target: T) =>
      !taken.has(target.key) &&
      group.targets.get(target.key) === target &&
      rankOf(target, now, mode) !== undefined;
    while (group.candidates.length > 0 && !eligible(group.candidates[0]!)) group.candidates.shift();
    const rescanMs = Math.min(MAX_RESCAN_MS, group.targets.size * RESCAN_MS_PER_TARGET);
    // A ranking that filled every place may leave more due behind it: once those are taken, rank
    // again at once (still a walk per CANDIDATES requests at least), or a group could start only one
    // ranking's worth per turn however many came due, and its polls fall behind with the CPU idle.
    const moreMayBeDue = group.candidates.length === 0 && group.rankedFull;
    if (now - group.rankedAt < rescanMs && !moreMayBeDue) return group.candidates[0];
    group.rankedAt = now;
    group.candidates = [];
    const places = Math.max(CANDIDATES, wanted);
    for (const key of pickTargets(group.targets.values(), now, places + taken.size, mode)) {
      const target = group.targets.get(key)!;
      if (!taken.has(key)) group.candidates.push(target);
      if (group.candidates.length === places) break;
    }
    group.rankedFull = group.candidates.length === places;
    return group.candidates[0];
  }

  #group(id: unknown, now: number): Group<K, T> {
    let group = this.#groups.get(id);
    if (group === undefined) {
      group = {
        id,
        virtual: this.#virtual,
        targets: new Map(),
        candidates: [],
        rankedAt: Number.NEGATIVE_INFINITY,
        rankedFull: false,
        usage: 0,
        usageAt: now,
      };
      this.#groups.set(id, group);
    }
    return group;
  }

  #leave(group: Group<K, T>, key: K): void {
    group.targets.delete(key);
    if (group.targets.size === 0) {
      this.#groups.delete(group.id);
      return;
    }
    // A group that still holds others ranks again only when it is next asked: meanwhile a candidate
    // left behind would keep the target, its streams and their rings alive (issue 51's long soak
    // found hundreds of targets kept so by groups whose clients had moved on).
    const at = group.candidates.findIndex((candidate) => candidate.key === key);
    if (at >= 0) group.candidates.splice(at, 1);
  }
}

function decay<K, T extends SharedTarget<K>>(group: Group<K, T>, now: number): void {
  const elapsed = now - group.usageAt;
  if (elapsed <= 0) return;
  group.usage *= Math.exp(-elapsed / USAGE_WINDOW_MS);
  group.usageAt = now;
}

/** The distinct owners of the subscribers of `streams`. */
export function holdersOf(
  streams: Iterable<AnyStream>,
  ownerOf: (subscriber: StreamSubscriber) => unknown,
): Set<unknown> {
  const owners = new Set<unknown>();
  for (const stream of streams) for (const subscriber of stream.subscribers) owners.add(ownerOf(subscriber));
  return owners;
}

/**
 * How long after a target's holders were made again a further change to them waits. A target a
 * wildcard holds has hundreds of holders and a change on nearly every turn while clients come and
 * go; making its holders again on each of those turns was the largest part of the relay's own
 * work on its event loop and of what it allocated (a set of hundreds per target per turn), in a
 * profile of the long soak (issue 51). The shares are measured over USAGE_WINDOW_MS (10 s,
 * relay/poll/share-groups.ts): holders half a second late move no share measurably.
 */
export const HOLDERS_REFRESH_MS = 500;

/**
 * The stream ids whose subscribers changed since the holders were last brought up to date: each
 * taken at the first turn after it changed, unless it was taken within HOLDERS_REFRESH_MS, when it
 * waits for the first turn after that.
 */
export class HolderChanges<Target> {
  readonly #changed = new Map<string, { channel: Channel; id: string }>();
  readonly #rebatched = new Set<Target>();
  /** Stream ids taken within HOLDERS_REFRESH_MS -> when; in the order taken, so oldest first. */
  readonly #taken = new Map<string, number>();

  /** A subscriber came to or left a stream of `channel` for `id`. */
  add(channel: Channel, id: string): void {
    this.#changed.set(`${channel}\u0000${id}`, { channel, id });
  }

  /** These targets' served streams changed (a price batch's markets): their holders are made again. */
  regroup(targets: Iterable<Target>): void {
    for (const target of targets) this.#rebatched.add(target);
  }

  /** Stream ids changed and not taken within HOLDERS_REFRESH_MS, and the rebatched; then forgotten. */
  take(now: number): { changed: { channel: Channel; id: string }[]; rebatched: Target[] } {
    for (const [key, takenAt] of this.#taken) {
      if (now - takenAt < HOLDERS_REFRESH_MS) break;
      this.#taken.delete(key);
    }
    const changed: { channel: Channel; id: string }[] = [];
    for (const [key, change] of this.#changed) {
      if (this.#taken.has(key)) continue;
      changed.push(change);
      this.#changed.delete(key);
      this.#taken.set(key, now);
    }
    const rebatched = [...this.#rebatched];
    this.#rebatched.clear();
    return { changed, rebatched };
  }
}
