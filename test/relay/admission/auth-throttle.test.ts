import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AuthThrottle } from '../../../src/relay/admission/auth-throttle.ts';
import { propertyRuns } from '../../support/property-runs.ts';

describe('AuthThrottle', () => {
  const limits = { freeFailures: 3, lockoutFailures: 6, lockoutMs: 60_000, maxGroups: 1_000 };

  it('answers the first failures at once, then later, then locks the group out for a while', () => {
    const clock = { t: 0 };
    const throttle = new AuthThrottle(limits, () => clock.t);
    const delays = Array.from({ length: 5 }, () => throttle.failed('a').delayMs);
    expect(delays).toEqual([0, 0, 0, 100, 200]);
    expect(throttle.verdict('a').kind).toBe('check');
    expect(throttle.failed('a').lockedOut).toBe(true);
    expect(throttle.verdict('a')).toEqual({ kind: 'locked', retryAfterMs: 60_000 });
    expect(throttle.verdict('b').kind).toBe('check'); // another address is not affected
    clock.t += 60_000;
    expect(throttle.verdict('a').kind).toBe('check');
    // Forgiven at 3 per minute after the lockout: one more failure now locks again.
    expect(throttle.failed('a').lockedOut).toBe(true);
  });

  it('forgives a few mistakes over time and forgets a quiet group', () => {
    const clock = { t: 0 };
    const throttle = new AuthThrottle(limits, () => clock.t);
    for (let i = 0; i < 3; i += 1) throttle.failed('a');
    clock.t += 60_000;
    expect(throttle.failed('a').delayMs).toBe(0);
    clock.t += 60_000;
    throttle.prune();
    expect(throttle.trackedGroups).toBe(0);
  });

  it('remembers at most maxGroups groups, forgetting the one whose last failure is oldest', () => {
    const clock = { t: 0 };
    const throttle = new AuthThrottle({ ...limits, maxGroups: 3 }, () => clock.t);
    for (let i = 0; i < 6; i += 1) throttle.failed('locked');
    throttle.failed('a');
    throttle.failed('b');
    throttle.failed('locked'); // locked out already: its failure is now the latest
    throttle.failed('c');
    expect(throttle.trackedGroups).toBe(3);
    expect(throttle.verdict('locked').kind).toBe('locked');
    // 'a' was forgotten: its next failure starts from nothing.
    expect([1, 2, 3].map(() => throttle.failed('a').delayMs)).toEqual([0, 0, 0]);
    expect(throttle.trackedGroups).toBe(3);
  });

  it('never holds more than maxGroups, and never refuses a group that did not fail', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 20 }),
        fc.array(fc.record({ group: fc.integer({ min: 0, max: 60 }), advanceMs: fc.nat(30_000) }), {
          maxLength: 300,
        }),
        fc.integer({ min: 61, max: 100 }),
        (maxGroups, failures, quiet) => {
          const clock = { t: 0 };
          const throttle = new AuthThrottle({ ...limits, maxGroups }, () => clock.t);
          for (const { group, advanceMs } of failures) {
            clock.t += advanceMs;
            throttle.failed(String(group));
            expect(throttle.trackedGroups).toBeLessThanOrEqual(maxGroups);
          }
          expect(throttle.verdict(String(quiet))).toEqual({ kind: 'check' });
          expect(throttle.trackedGroups).toBeLessThanOrEqual(maxGroups);
        },
      ),
      { numRuns: propertyRuns(200) },
    );
  });
});
