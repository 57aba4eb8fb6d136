/**
 * The pure scheduling core, by property: what it may never choose, and — simulated over a minute of
 * virtual time with a fixed request budget — that the maximum age holds whenever the budget can
 * cover it, that busy or hinted targets are asked more often than quiet ones, and that a connection's
 * many private targets never starve a target others share.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  changeHistoryAfter,
  changeRateOf,
  deadlineSlackMs,
  expectedUnseenDelayMs,
  initialChangeHistory,
  pickTargets,
  rankOf,
  type SchedulerMode,
  type TargetView,
} from '../../../src/relay/poll/scheduler.ts';
import { type SharedTarget, ShareGroups } from '../../../src/relay/poll/share-groups.ts';
import { propertyRuns } from '../../support/property-runs.ts';

type Target = TargetView<number> & { holders?: ReadonlySet<unknown> };

function target(key: number, overrides: Partial<Target> = {}): Target {
  return {
    key,
    timing: { minIntervalMs: 1_000, maxAgeMs: 30_000 },
    addedAt: 0,
    lastAskedAt: 0,
    confirmedAt: 0,
    inFlight: false,
    awaitingFirstAsk: false,
    weight: 1,
    changeRate: 0.1,
    hintedAt: undefined,
    ...overrides,
  };
}

const arbitraryTarget = (key: number, now: number): fc.Arbitrary<Target> =>
  fc
    .record({
      minIntervalMs: fc.integer({ min: 10, max: 5_000 }),
      extraAgeMs: fc.integer({ min: 0, max: 60_000 }),
      askedAgo: fc.option(fc.integer({ min: 0, max: 60_000 })),
      inFlight: fc.boolean(),
      weight: fc.double({ min: 0.001, max: 100, noNaN: true }),
      changeRate: fc.double({ min: 0, max: 20, noNaN: true }),
      hinted: fc.boolean(),
    })
    .map((t) =>
      target(key, {
        timing: { minIntervalMs: t.minIntervalMs, maxAgeMs: t.minIntervalMs + t.extraAgeMs },
        lastAskedAt: t.askedAgo === null ? undefined : now - t.askedAgo,
        awaitingFirstAsk: t.askedAgo === null,
        confirmedAt: t.askedAgo === null ? undefined : now - t.askedAgo,
        inFlight: t.inFlight,
        weight: t.weight,
        changeRate: t.changeRate,
        hintedAt: t.hinted && t.askedAgo !== null ? now - t.askedAgo / 2 : undefined,
      }),
    );

const NOW = 1_000_000;
const arbitraryTargets = fc
  .integer({ min: 0, max: 40 })
  .chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => arbitraryTarget(i, NOW))));

describe('pickTargets', () => {
  it.each(['freshness', 'round-robin'] as SchedulerMode[])(
    '%s: at most `slots`, never in flight, never before the minimum interval (except a first ask)',
    (mode) => {
      fc.assert(
        fc.property(arbitraryTargets, fc.integer({ min: 0, max: 50 }), (targets, slots) => {
          const picked = pickTargets(targets, NOW, slots, mode);
          expect(picked.length).toBeLessThanOrEqual(slots);
          expect(new Set(picked).size).toBe(picked.length);
          for (const key of picked) {
            const t = targets[key]!;
            expect(t.inFlight).toBe(false);
            if (!t.awaitingFirstAsk)
              expect(NOW - t.lastAskedAt!).toBeGreaterThanOrEqual(t.timing.minIntervalMs);
          }
          // Work-conserving: a slot is left unused only when nothing else may be asked.
          const eligible = pickTargets(targets, NOW, Number.MAX_SAFE_INTEGER, mode);
          expect(picked.length).toBe(Math.min(slots, eligible.length));
        }),
      );
    },
  );

  it.each(['freshness', 'round-robin'] as SchedulerMode[])(
    '%s: the best `slots` in the order of a full sort (equals in input order)',
    (mode) => {
      fc.assert(
        fc.property(arbitraryTargets, fc.integer({ min: 1, max: 50 }), (targets, slots) => {
          const ranked = targets
            .map((t) => rankOf(t, NOW, mode))
            .filter((r) => r !== undefined)
            .sort((a, b) => b.rank - a.rank || b.score - a.score || b.age - a.age);
          expect(pickTargets(targets, NOW, slots, mode)).toEqual(ranked.slice(0, slots).map((r) => r.key));
        }),
      );
    },
  );

  it('asks a target nearing its maximum age before any that is not', () => {
    fc.assert(
      fc.property(arbitraryTargets, fc.integer({ min: 1, max: 10 }), (targets, slots) => {
        const picked = new Set(pickTargets(targets, NOW, slots, 'freshness'));
        const due = (t: Target) =>
          !t.awaitingFirstAsk &&
          NOW - (t.confirmedAt ?? t.addedAt) + deadlineSlackMs(t.timing) >= t.timing.maxAgeMs;
        const eligible = new Set(pickTargets(targets, NOW, Number.MAX_SAFE_INTEGER, 'freshness'));
        const dueEligible = targets.filter((t) => eligible.has(t.key) && due(t));
        // Every slot goes to a due target while due targets remain.
        const pickedDue = targets.filter((t) => picked.has(t.key) && due(t)).length;
        expect(pickedDue).toBe(Math.min(slots, dueEligible.length));
      }),
    );
  });
});

/**
 * Runs the scheduler over virtual time: every `stepMs` it may start as many requests as the budget
 * has accrued; each response comes back `latencyMs` later and confirms its target.
 */
function simulate(
  targets: Target[],
  {
    rps,
    seconds,
    mode,
    latencyMs = 50,
    stepMs = 20,
    choose = (now, slots) => pickTargets(targets, now, slots, mode),
  }: {
    rps: number;
    seconds: number;
    mode: SchedulerMode;
    latencyMs?: number;
    stepMs?: number;
    /** How the targets to ask are chosen; default the scheduler over all of them. */
    choose?: (now: number, slots: number) => number[];
  },
): { maxAge: number[]; asks: number[] } {
  const maxAge = targets.map(() => 0);
  const asks = targets.map(() => 0);
  const returning: { at: number; key: number; askedAt: number }[] = [];
  let tokens = 0;
  for (let now = 0; now <= seconds * 1000; now += stepMs) {
    for (const response of returning.filter((r) => r.at <= now)) {
      const t = targets[response.key]!;
      t.inFlight = false;
      t.confirmedAt = response.at;
    }
    returning.splice(0, returning.length, ...returning.filter((r) => r.at > now));
    tokens = Math.min(tokens + (rps * stepMs) / 1000, Math.max(1, rps / 5));
    const picked = choose(now, Math.floor(tokens));
    for (const key of picked) {
      const t = targets[key]!;
      tokens -= 1;
      t.inFlight = true;
      t.lastAskedAt = now;
      t.awaitingFirstAsk = false;
      t.hintedAt = undefined;
      asks[key]! += 1;
      returning.push({ at: now + latencyMs, key, askedAt: now });
    }
    targets.forEach((t, i) => {
      maxAge[i] = Math.max(maxAge[i]!, now - (t.confirmedAt ?? t.addedAt));
    });
  }
  return { maxAge, asks };
}

describe('hints', () => {
  it('put a book hinted a second ago before one a hint read covered, asked up to a minute ago', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1_000, max: 60_000 }),
        fc.double({ min: 0, max: 5, noNaN: true }),
        (askedAgo, rate) => {
          const timing = { minIntervalMs: 250, maxAgeMs: 10_000_000 };
          const hinted = target(0, { timing, lastAskedAt: NOW - 300, hintedAt: NOW - 1_000, changeRate: 0 });
          const covered = target(1, {
            timing,
            lastAskedAt: NOW - askedAgo,
            confirmedAt: NOW - askedAgo,
            coveredAt: NOW - 100,
            changeRate: rate,
          });
          expect(pickTargets([covered, hinted], NOW, 1, 'freshness')).toEqual([0]);
        },
      ),
    );
  });
});

describe('the scheduler over a simulated minute', () => {
  it('confirms every target within its maximum age whenever the budget can cover it', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 200 }),
        fc.integer({ min: 2_000, max: 20_000 }),
        fc.array(fc.double({ min: 0, max: 10, noNaN: true }), { minLength: 1, maxLength: 200 }),
        (count, maxAgeMs, rates) => {
          const timing = { minIntervalMs: 250, maxAgeMs };
          // Enough for every target once per (maxAge - slack), plus a third for the hot ones, and at
          // least a token every half second (the slack is a second or more).
          const rps = Math.max(
            2,
            Math.ceil(((count * 1000) / (maxAgeMs - deadlineSlackMs(timing) - 200)) * 1.34),
          );
          const targets = Array.from({ length: count }, (_, i) =>
            target(i, {
              timing,
              changeRate: rates[i % rates.length]!,
              lastAskedAt: undefined,
              confirmedAt: undefined,
              awaitingFirstAsk: true,
            }),
          );
          const { maxAge } = simulate(targets, { rps, seconds: 60, mode: 'freshness' });
          expect(Math.max(...maxAge)).toBeLessThanOrEqual(maxAgeMs);
        },
      ),
      { numRuns: propertyRuns(25) },
    );
  });

  it('spends more of a short budget on busy and hinted books than on quiet ones', () => {
    const timing = { minIntervalMs: 250, maxAgeMs: 60_000 };
    const targets = Array.from({ length: 100 }, (_, i) =>
      target(i, {
        timing,
        changeRate: i < 10 ? 4 : 1 / 60,
        lastAskedAt: undefined,
        confirmedAt: undefined,
        awaitingFirstAsk: true,
      }),
    );
    const { asks } = simulate(targets, { rps: 20, seconds: 60, mode: 'freshness' });
    const busy = asks.slice(0, 10).reduce((a, b) => a + b, 0) / 10;
    const quiet = asks.slice(10).reduce((a, b) => a + b, 0) / 90;
    expect(busy).toBeGreaterThan(5 * quiet);
    // Round-robin spends alike.
    const rr = simulate(
      Array.from({ length: 100 }, (_, i) =>
        target(i, { timing, lastAskedAt: undefined, confirmedAt: undefined, awaitingFirstAsk: true }),
      ),
      { rps: 20, seconds: 60, mode: 'round-robin' },
    ).asks;
    expect(Math.max(...rr) - Math.min(...rr)).toBeLessThanOrEqual(2);
  });

  it('never lets one connection’s private targets starve a target another connection wants', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 10, max: 300 }),
        fc.constantFrom<SchedulerMode>('freshness', 'round-robin'),
        (flood, mode) => {
          // Connection "a" alone wants `flood` targets; "b" wants target 0; "a" and "b" share target 1.
          const owners = new Map<number, Set<string>>([
            [0, new Set(['b'])],
            [1, new Set(['a', 'b'])],
          ]);
          for (let i = 2; i < flood + 2; i++) owners.set(i, new Set(['a']));
          const timing = { minIntervalMs: 1_000, maxAgeMs: 600_000 };
          const targets = [...owners.keys()].map((key) =>
            target(key, {
              timing,
              holders: owners.get(key)!,
              changeRate: 1,
              lastAskedAt: undefined,
              confirmedAt: undefined,
              awaitingFirstAsk: true,
            }),
          );
          // A budget far below the flood's demand, even while the flood's first asks are pending:
          // b's two targets are still asked within 1.5x of their one-second interval.
          const groups = new ShareGroups<number, SharedTarget<number>>();
          for (const t of targets) groups.place(t, 0);
          const choose = (now: number, slots: number) => groups.pick(now, slots, mode).map((t) => t.key);
          const { asks } = simulate(targets, { rps: 10, seconds: 30, mode, choose });
          expect(asks[0]).toBeGreaterThanOrEqual(20);
          expect(asks[1]).toBeGreaterThanOrEqual(20);
        },
      ),
      { numRuns: propertyRuns(10) },
    );
  });
});

describe('change rates', () => {
  it('learn a busy target as busier than a quiet one, and stay finite', () => {
    fc.assert(
      fc.property(
        fc.array(fc.boolean(), { minLength: 1, maxLength: 100 }),
        fc.integer({ min: 1, max: 60_000 }),
        (changes, gap) => {
          let history = initialChangeHistory;
          for (const changed of changes) history = changeHistoryAfter(history, changed, gap);
          const rate = changeRateOf(history);
          expect(Number.isFinite(rate)).toBe(true);
          expect(rate).toBeGreaterThanOrEqual(0);
        },
      ),
    );
    let busy = initialChangeHistory;
    let quiet = initialChangeHistory;
    for (let i = 0; i < 20; i++) {
      busy = changeHistoryAfter(busy, true, 1_000);
      quiet = changeHistoryAfter(quiet, i % 10 === 0, 1_000);
    }
    expect(changeRateOf(busy)).toBeGreaterThan(5 * changeRateOf(quiet));
  });

  it('expected unseen delay grows with time and with the change rate', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.001, max: 50, noNaN: true }),
        fc.integer({ min: 1, max: 100_000 }),
        fc.integer({ min: 1, max: 100_000 }),
        (rate, t, dt) => {
          const now = expectedUnseenDelayMs(rate, t);
          expect(now).toBeGreaterThanOrEqual(0);
          expect(now).toBeLessThanOrEqual(t);
          expect(expectedUnseenDelayMs(rate, t + dt)).toBeGreaterThanOrEqual(now);
          expect(expectedUnseenDelayMs(rate * 2, t)).toBeGreaterThanOrEqual(now - 1e-9);
        },
      ),
    );
  });
});
