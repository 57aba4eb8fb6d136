/**
 * The budget shared by who asks (relay/poll/share-groups.ts), on a simulated clock: every group that
 * wants more than its share gets the same number of requests however many targets it holds, a group
 * wanting less gets all it wants, a target held by several groups is paid for by each in part, and a
 * group idle for a while banks no credit to flood the others with afterwards.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { RELAY_GROUP, type SharedTarget, ShareGroups } from '../../../src/relay/poll/share-groups.ts';

// A context made after the flag has `gc`: whether a target is still reachable is what is asserted.
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

function target(key: string, holders: readonly unknown[], minIntervalMs = 1_000): SharedTarget {
  return {
    key,
    holders: new Set(holders),
    timing: { minIntervalMs, maxAgeMs: 30_000 },
    addedAt: 0,
    lastAskedAt: undefined,
    confirmedAt: undefined,
    inFlight: false,
    awaitingFirstAsk: true,
    weight: 1,
    changeRate: 1,
    hintedAt: undefined,
  };
}

/** Requests per target key over `[from, to)` ms at `rps`, each answered at once. */
function run(
  groups: ShareGroups<string, SharedTarget>,
  { rps, from = 0, to }: { rps: number; from?: number; to: number },
): Map<string, number> {
  const asks = new Map<string, number>();
  let tokens = 0;
  for (let now = from; now < to; now += 10) {
    tokens = Math.min(tokens + rps / 100, Math.max(1, rps / 5));
    for (const picked of groups.pick(now, Math.floor(tokens), 'freshness')) {
      tokens -= 1;
      picked.lastAskedAt = now;
      picked.confirmedAt = now;
      picked.awaitingFirstAsk = false;
      asks.set(picked.key, (asks.get(picked.key) ?? 0) + 1);
    }
  }
  return asks;
}

/**
 * Files `leaving` second of a group's six targets, lets a turn of one slot rank the group (its
 * first target asked, the other five its candidates), then removes `leaving`: a reference to what
 * no longer holds it.
 */
function rankedThenRemoved(groups: ShareGroups<string, SharedTarget>): WeakRef<SharedTarget> {
  const leaving = target('leaving', ['a']);
  groups.place(target('kept:0', ['a']), 0);
  groups.place(leaving, 0);
  for (let i = 1; i < 5; i++) groups.place(target(`kept:${i}`, ['a']), 0);
  expect(groups.pick(0, 1, 'freshness').map((picked) => picked.key)).toEqual(['kept:0']);
  groups.remove('leaving');
  return new WeakRef(leaving);
}

function sumOf(asks: Map<string, number>, prefix: string): number {
  let sum = 0;
  for (const [key, count] of asks) if (key.startsWith(prefix)) sum += count;
  return sum;
}

describe('ShareGroups', () => {
  it('gives a turn as many due targets of one group as it has slots for, however many came due', () => {
    const groups = new ShareGroups<string, SharedTarget>();
    for (let i = 0; i < 405; i++) groups.place(target(`book:${i}`, ['one client']), 0);
    const ask = (now: number, slots: number) => {
      const picked = groups.pick(now, slots, 'freshness');
      for (const one of picked) {
        one.lastAskedAt = now;
        one.awaitingFirstAsk = false;
      }
      return picked.length;
    };
    // A ranking keeps eight candidates at least: 64 slots get 64, and again at the same instant.
    expect(ask(0, 64)).toBe(64);
    expect(ask(0, 64)).toBe(64);
    // Every one of the 405 due is asked within turns of 64 at one instant, none twice.
    let asked = 128;
    for (let turn = 0; turn < 10; turn++) asked += ask(0, 64);
    expect(asked).toBe(405);
  });

  it('gives a group of three targets all it asks for beside a group of a thousand, which gets the rest', () => {
    const groups = new ShareGroups<string, SharedTarget>();
    for (let i = 0; i < 1_000; i++) groups.place(target(`heavy:${i}`, ['heavy']), 0);
    for (let i = 0; i < 3; i++) groups.place(target(`light:${i}`, ['light']), 0);
    const asks = run(groups, { rps: 20, to: 60_000 });
    // Each light target at its one-second interval, whatever the thousand others want.
    for (let i = 0; i < 3; i++) expect(asks.get(`light:${i}`)).toBeGreaterThanOrEqual(58);
    // Work-conserving: the heavy group takes what the light one leaves (20/s in all).
    expect(sumOf(asks, 'heavy:')).toBeGreaterThanOrEqual(60 * 17 - 10);
  });

  it('splits the budget evenly between groups that all want more, whatever the number of targets each holds', () => {
    const groups = new ShareGroups<string, SharedTarget>();
    const sizes = { a: 2_000, b: 200, c: 20 };
    for (const [group, size] of Object.entries(sizes))
      for (let i = 0; i < size; i++) groups.place(target(`${group}:${i}`, [group], 100), 0);
    const asks = run(groups, { rps: 30, to: 30_000 });
    const counts = Object.keys(sizes).map((group) => sumOf(asks, `${group}:`));
    const total = counts.reduce((sum, count) => sum + count, 0);
    for (const count of counts) expect(Math.abs(count / total - 1 / 3)).toBeLessThan(0.02);
    const shares = groups.shares(30_000);
    expect(shares.map((share) => share.targets).sort((x, y) => x - y)).toEqual([20, 200, 2_000]);
    for (const share of shares) expect(Math.abs(share.share - 1 / 3)).toBeLessThan(0.03);
  });

  it('charges a target held by k groups 1/k to each, so sharing it costs each holder less', () => {
    const groups = new ShareGroups<string, SharedTarget>();
    // a and b share ten targets; a also wants a hundred of its own; c wants a hundred alone.
    for (let i = 0; i < 10; i++) groups.place(target(`shared:${i}`, ['a', 'b'], 100), 0);
    for (let i = 0; i < 100; i++) groups.place(target(`a:${i}`, ['a'], 100), 0);
    for (let i = 0; i < 100; i++) groups.place(target(`c:${i}`, ['c'], 100), 0);
    const asks = run(groups, { rps: 30, to: 30_000 });
    const shared = sumOf(asks, 'shared:');
    const paidByA = sumOf(asks, 'a:') + shared / 2;
    const paidByB = shared / 2;
    const paidByC = sumOf(asks, 'c:');
    // Three busy groups, an equal third each of what was paid.
    const total = paidByA + paidByB + paidByC;
    for (const paid of [paidByA, paidByB, paidByC]) expect(Math.abs(paid / total - 1 / 3)).toBeLessThan(0.03);
  });

  it('gives a group idle for a while no credit: it gets its share when it asks again, not the whole budget', () => {
    const groups = new ShareGroups<string, SharedTarget>();
    for (let i = 0; i < 500; i++) groups.place(target(`busy:${i}`, ['busy'], 100), 0);
    run(groups, { rps: 20, to: 30_000 });
    for (let i = 0; i < 500; i++) groups.place(target(`late:${i}`, ['late'], 100), 30_000);
    const asks = run(groups, { rps: 20, from: 30_000, to: 35_000 });
    const late = sumOf(asks, 'late:');
    const busy = sumOf(asks, 'busy:');
    expect(Math.abs(late / (late + busy) - 1 / 2)).toBeLessThan(0.05);
  });

  it("files a target nobody holds as the relay's own, and moves it when its holders change", () => {
    const groups = new ShareGroups<string, SharedTarget>();
    const lingering = target('t', []);
    groups.place(lingering, 0);
    expect(groups.shares(0).map((share) => share.group)).toEqual([RELAY_GROUP]);
    groups.place({ ...lingering, holders: new Set(['a', 'b']) }, 0);
    expect(new Set(groups.shares(0).map((share) => share.group))).toEqual(new Set(['a', 'b']));
    groups.remove('t');
    expect(groups.size).toBe(0);
  });

  it('leaves a holder filed as it was when another holder of the same target comes or goes', () => {
    const groups = new ShareGroups<string, SharedTarget>();
    const held = target('t', ['a']);
    groups.place(held, 0);
    expect(groups.pick(0, 1, 'freshness')).toEqual([held]);
    const paidByA = () => groups.shares(0).find((share) => share.group === 'a')?.requestsPerSecond;
    const paid = paidByA();
    expect(paid).toBeGreaterThan(0);
    // `b` comes and goes: `a` still holds `t` throughout, and what it paid stays its own.
    groups.place({ ...held, holders: new Set(['a', 'b']) }, 0);
    expect(paidByA()).toBe(paid);
    // Placed again as another object under the same key: the groups that keep it hold that one.
    const remade = { ...held, holders: new Set(['a']) };
    groups.place(remade, 0);
    expect(paidByA()).toBe(paid);
    expect(groups.shares(0).map((share) => share.group)).toEqual(['a']);
    expect(groups.pick(1_000, 1, 'freshness')).toEqual([remade]);
  });

  it('lets go of a target it no longer files, even one its group had ranked to ask next', async () => {
    const groups = new ShareGroups<string, SharedTarget>();
    const leaving = rankedThenRemoved(groups);
    // A WeakRef keeps its target until the job that made it ends.
    await new Promise((resolve) => setImmediate(resolve));
    collectGarbage();
    expect(leaving.deref()).toBeUndefined();
    // The group asks the others as before.
    expect(
      groups
        .pick(0, 10, 'freshness')
        .map((picked) => picked.key)
        .sort(),
    ).toEqual(['kept:1', 'kept:2', 'kept:3', 'kept:4']);
  });

  it('gives back what a request that never went upstream was charged (another relay held the lease)', () => {
    const groups = new ShareGroups<string, SharedTarget>();
    const followed = target('followed', ['a']);
    const own = target('own', ['b']);
    groups.place(followed, 0);
    groups.place(own, 0);
    expect(groups.pick(0, 1, 'freshness')).toEqual([followed]);
    groups.charge(followed, 0, -1);
    expect(groups.shares(0).find((share) => share.group === 'a')?.requestsPerSecond).toBe(0);
    // Refunded, `a` has paid no more than `b`: the next request is not held against it (of two
    // groups that paid alike, the first filed goes first).
    expect(groups.pick(1, 1, 'freshness')).toEqual([followed]);
  });
});
