import { describe, expect, it } from 'vitest';
import { AuthThrottle } from '../../../src/relay/admission/auth-throttle.ts';

describe('AuthThrottle', () => {
  const limits = { freeFailures: 3, lockoutFailures: 6, lockoutMs: 60_000 };

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
});
