import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type FrameVerdict, RATE_WINDOW_MS, RequestGuard } from '../../src/ws/request-guard.ts';
import { propertyRuns } from '../support/property-runs.ts';

function guard(now: { t: number }, floodCloseAfterMs = 5_000) {
  return new RequestGuard({ requestsPerSecond: 20, requestBurst: 40, floodCloseAfterMs, now: () => now.t });
}

describe('RequestGuard', () => {
  it('handles the burst, then answers one frame per window and drops the rest unanswered', () => {
    const clock = { t: 0 };
    const limits = guard(clock);
    const verdicts = Array.from({ length: 1_000 }, () => limits.admit());
    expect(verdicts.filter((verdict) => verdict === 'handle')).toHaveLength(40);
    expect(verdicts.filter((verdict) => verdict === 'refuse')).toHaveLength(1);
    expect(verdicts.filter((verdict) => verdict === 'drop')).toHaveLength(959);
    expect(limits.dropped).toBe(960);
    expect(limits.waitMs).toBe(50); // one token at 20/s
  });

  it('serves a connection again once it slows down, and forgets a flood after a quiet window', () => {
    const clock = { t: 0 };
    const limits = guard(clock, 3_000);
    for (let i = 0; i < 100; i += 1) limits.admit();
    clock.t += 2_500;
    expect(limits.admit()).toBe('handle');
    // Over the rate again after a quiet window: a new run, far from the close.
    for (let i = 0; i < 100; i += 1) expect(limits.admit()).not.toBe('close');
  });

  it('closes a connection that stays over its rate for floodCloseAfterMs, whatever it sends', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 200 }),
        fc.integer({ min: 20, max: 1_900 }),
        (perStep, stepMs) => {
          const clock = { t: 0 };
          const limits = guard(clock, 5_000);
          const seen: FrameVerdict[] = [];
          // Each step sends far more than the rate allows; steps are closer together than two windows.
          while (clock.t <= 10_000 && !seen.includes('close')) {
            for (let i = 0; i < perStep + 40; i += 1) seen.push(limits.admit());
            clock.t += stepMs;
          }
          expect(seen).toContain('close');
          expect(clock.t).toBeLessThanOrEqual(5_000 + 2 * stepMs);
          // At most one answer per window before the close.
          expect(seen.filter((verdict) => verdict === 'refuse').length).toBeLessThanOrEqual(
            Math.ceil(clock.t / RATE_WINDOW_MS) + 1,
          );
        },
      ),
      { numRuns: propertyRuns(50) },
    );
  });

  it('never closes a client that stays within its rate', () => {
    const clock = { t: 0 };
    const limits = guard(clock, 1_000);
    for (let i = 0; i < 1_000; i += 1) {
      expect(limits.admit()).toBe('handle');
      clock.t += 50;
    }
  });
});
