/**
 * The share of the cluster budget each relay keeps to while Redis is away: the shares of all live
 * relays add up to the whole budget, whatever each one spent.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { budgetShare } from '../../../src/relay/coordination/redis/budget-scripts.ts';

describe('budgetShare', () => {
  it('gives each relay what it spends plus an equal part of what nobody spends', () => {
    expect(budgetShare({ own: 10, total: 30, relays: 3, rps: 60 })).toBeCloseTo(20 / 60);
    expect(budgetShare({ own: 0, total: 0, relays: 4, rps: 100 })).toBeCloseTo(0.25);
    expect(budgetShare({ own: 50, total: 50, relays: 1, rps: 50 })).toBe(1);
  });

  it('adds up to the whole budget over the live relays, even when a burst overspent it', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10_000 }),
        fc.array(fc.double({ min: 0, max: 20_000, noNaN: true }), { minLength: 1, maxLength: 20 }),
        (rps, spending) => {
          const total = spending.reduce((sum, own) => sum + own, 0);
          const shares = spending.map((own) => budgetShare({ own, total, relays: spending.length, rps }));
          for (const share of shares) expect(share).toBeGreaterThanOrEqual(0);
          expect(shares.reduce((sum, share) => sum + share, 0)).toBeCloseTo(1, 6);
        },
      ),
    );
  });
});
