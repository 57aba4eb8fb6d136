/**
 * The 429 backoff (docs/scheduler.md "Rate limits"): a 429 lowers the rate in use, no 429 within a
 * hold lowers it again, nothing raises it before the hold ends, and without 429s it is back at the
 * configured rate within ten seconds of the hold.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  afterRateLimited,
  limitAt,
  NOT_LIMITED,
  RATE_DECREASE,
  RATE_FLOOR_SHARE,
  type RateBackoff,
} from '../../src/upstream/rate-gate.ts';
import { propertyRuns } from '../support/property-runs.ts';

const answers = fc.array(
  fc.record({
    gapMs: fc.integer({ min: 0, max: 5_000 }),
    retryAfterMs: fc.option(fc.integer({ min: 0, max: 30_000 }), { nil: undefined }),
    usedShare: fc.double({ min: 0, max: 1.2, noNaN: true }),
  }),
  { minLength: 1, maxLength: 30 },
);

describe('rate backoff after 429s', () => {
  it('halves the rate in use, down to a tenth of the configured rate', () => {
    const first = afterRateLimited(NOT_LIMITED, {
      now: 0,
      retryAfterMs: 1_000,
      usedRps: 40,
      configuredRps: 50,
    });
    expect(first).toEqual({ limitRps: 40 * RATE_DECREASE, holdUntil: 1_000 });
    // A second 429 inside the hold is the same signal: no second cut, a longer hold.
    expect(
      afterRateLimited(first, { now: 500, retryAfterMs: 2_000, usedRps: 40, configuredRps: 50 }),
    ).toEqual({
      limitRps: 20,
      holdUntil: 2_500,
    });
    expect(
      afterRateLimited(NOT_LIMITED, { now: 0, retryAfterMs: undefined, usedRps: 0, configuredRps: 50 }),
    ).toEqual({ limitRps: 50 * RATE_FLOOR_SHARE, holdUntil: 1_000 });
    expect(limitAt(first, 999, 50)).toBe(20);
    expect(limitAt(first, 2_000, 50)).toBe(25);
    expect(limitAt(first, 7_000, 50)).toBeUndefined();
  });

  it('stays within [a tenth, all] of the configured rate, never rises within a hold, and recovers within 10 s of it', () => {
    fc.assert(
      fc.property(answers, fc.integer({ min: 1, max: 1_000 }), (sequence, configuredRps) => {
        let backoff: RateBackoff = NOT_LIMITED;
        let now = 0;
        for (const { gapMs, retryAfterMs, usedShare } of sequence) {
          now += gapMs;
          const before = limitAt(backoff, now, configuredRps) ?? configuredRps;
          backoff = afterRateLimited(backoff, {
            now,
            retryAfterMs,
            usedRps: usedShare * configuredRps,
            configuredRps,
          });
          const after = limitAt(backoff, now, configuredRps);
          expect(after).toBeDefined();
          expect(after!).toBeGreaterThanOrEqual(configuredRps * RATE_FLOOR_SHARE);
          expect(after!).toBeLessThanOrEqual(Math.max(before, configuredRps * RATE_FLOOR_SHARE));
          expect(backoff.holdUntil).toBeGreaterThanOrEqual(now + Math.max(1_000, retryAfterMs ?? 0) - 1e-9);
          expect(limitAt(backoff, backoff.holdUntil - 1, configuredRps)).toBe(after);
        }
        expect(limitAt(backoff, backoff.holdUntil + 10_000, configuredRps)).toBeUndefined();
      }),
      { numRuns: propertyRuns(300) },
    );
  });
});
