/**
 * The plan of a `"*"` subscription for a new list of active markets (relay/session/wildcard-plan.ts):
 * it leaves exactly the held markets no longer listed, never joins a market that is not listed, is
 * held already, or is the client's by name, joins no more than the room left, and tries every
 * listed market it has not dealt with yet (waiting ones first); a market dropped by name stays out
 * while it stays listed.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { planWildcard, type WildcardTracking } from '../../../src/relay/session/wildcard-plan.ts';
import { propertyRuns } from '../../support/property-runs.ts';

const market = fc.constantFrom(...Array.from({ length: 12 }, (_, i) => `m${i}`));
const markets = fc.uniqueArray(market);

/** A wildcard's tracking as it can be: what it owns or waits for it has dealt with (covered). */
const tracking = fc
  .record({ owned: markets, waiting: markets, dropped: markets })
  .map(({ owned, waiting, dropped }): WildcardTracking => {
    const waits = waiting.filter((m) => !owned.includes(m));
    return {
      owned: new Set(owned),
      waiting: new Set(waits),
      covered: new Set([...owned, ...waits, ...dropped]),
    };
  });

describe('planWildcard', () => {
  it('leaves, joins and waits as the catalogue says, within the room', () => {
    fc.assert(
      fc.property(
        markets,
        tracking,
        markets,
        fc.integer({ min: -2, max: 8 }),
        (active, state, named, room) => {
          const byName = (m: string) => named.includes(m) && !state.owned.has(m);
          const plan = planWildcard(active, state, byName, room);
          const listed = new Set(active);

          expect(new Set(plan.leave)).toEqual(new Set([...state.owned].filter((m) => !listed.has(m))));
          const tried = [...plan.join, ...plan.noRoom];
          expect(new Set(tried).size).toBe(tried.length);
          expect(plan.join.length).toBeLessThanOrEqual(Math.max(0, room));
          if (plan.noRoom.length > 0) expect(plan.join.length).toBe(Math.max(0, room));
          for (const m of tried) {
            expect(listed.has(m)).toBe(true);
            expect(state.owned.has(m)).toBe(false);
            expect(byName(m)).toBe(false);
          }
          // Every listed market it has not dealt with, and every one still waiting, gets its turn.
          const due = active.filter(
            (m) => !byName(m) && !state.owned.has(m) && (state.waiting.has(m) || !state.covered.has(m)),
          );
          expect(new Set(tried)).toEqual(new Set(due));
          // Waiting markets come first.
          const firstNew = tried.findIndex((m) => !state.waiting.has(m));
          if (firstNew >= 0) expect(tried.slice(firstNew).every((m) => !state.waiting.has(m))).toBe(true);
          expect(plan.covered).toEqual(listed);
          expect([...plan.stillWaiting].every((m) => listed.has(m) && state.waiting.has(m))).toBe(true);
        },
      ),
      { numRuns: propertyRuns(500) },
    );
  });

  it('a market dropped by name is not joined again while it stays listed, but is once it comes back', () => {
    const state: WildcardTracking = {
      owned: new Set(['a']),
      waiting: new Set(),
      covered: new Set(['a', 'b']),
    };
    expect(planWildcard(['a', 'b'], state, () => false, 10).join).toEqual([]);
    const after = planWildcard(['a'], state, () => false, 10);
    expect(planWildcard(['a', 'b'], { ...state, covered: after.covered }, () => false, 10).join).toEqual([
      'b',
    ]);
  });
});
