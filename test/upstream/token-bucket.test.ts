import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TokenBucket } from '../../src/upstream/rate-gate.ts';
import { propertyRuns } from '../support/property-runs.ts';

function fakeClock(start = 1000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

describe('TokenBucket', () => {
  it('allows a burst of one second, then spaces reservations by 1/rate', () => {
    const clock = fakeClock();
    const bucket = new TokenBucket({ ratePerSecond: 4, now: clock.now });
    expect([1, 2, 3, 4].map(() => bucket.reserve())).toEqual([0, 0, 0, 0]);
    expect([5, 6, 7].map(() => bucket.reserve())).toEqual([250, 500, 750]);
  });

  it('serves waiting callers in arrival order (each waits longer than the one before)', () => {
    const clock = fakeClock();
    const bucket = new TokenBucket({ ratePerSecond: 10, capacity: 1, now: clock.now });
    const waits = Array.from({ length: 5 }, () => bucket.reserve());
    expect(waits).toEqual([0, 100, 200, 300, 400]);
  });

  it('refills continuously but never above capacity', () => {
    const clock = fakeClock();
    const bucket = new TokenBucket({ ratePerSecond: 2, now: clock.now });
    bucket.reserve();
    bucket.reserve();
    expect(bucket.tokens).toBe(0);
    clock.advance(250);
    expect(bucket.tokens).toBeCloseTo(0.5);
    clock.advance(60_000);
    expect(bucket.tokens).toBe(2);
  });

  it('pays back debt before new tokens are free', () => {
    const clock = fakeClock();
    const bucket = new TokenBucket({ ratePerSecond: 1, now: clock.now });
    bucket.reserve();
    expect(bucket.reserve()).toBe(1000);
    clock.advance(1000);
    expect(bucket.reserve()).toBe(1000);
  });

  it('takes back a refunded token', () => {
    const clock = fakeClock();
    const bucket = new TokenBucket({ ratePerSecond: 1, now: clock.now });
    bucket.reserve();
    expect(bucket.reserve()).toBe(1000);
    bucket.refund();
    expect(bucket.reserve()).toBe(1000);
  });

  it('ignores a clock that goes backwards', () => {
    const clock = fakeClock();
    const bucket = new TokenBucket({ ratePerSecond: 1, now: clock.now });
    bucket.reserve();
    clock.advance(-5000);
    expect(bucket.tokens).toBe(0);
  });

  it('rejects a non-positive rate', () => {
    expect(() => new TokenBucket({ ratePerSecond: 0 })).toThrow(RangeError);
  });

  it('never starts more than capacity + rate * window in any window', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 50 }),
        fc.array(fc.integer({ min: 0, max: 300 }), { minLength: 1, maxLength: 200 }),
        (rate, gaps) => {
          const clock = fakeClock();
          const bucket = new TokenBucket({ ratePerSecond: rate, now: clock.now });
          const starts = gaps.map((gap) => {
            clock.advance(gap);
            return clock.now() + bucket.reserve();
          });
          for (const [i, from] of starts.entries()) {
            for (const to of starts.slice(i)) {
              const inWindow = starts.filter((t) => t >= from && t <= to).length;
              expect(inWindow).toBeLessThanOrEqual(bucket.capacity + (rate * (to - from)) / 1000 + 1);
            }
          }
          // FIFO: start times never go backwards in arrival order.
          expect(starts).toEqual([...starts].sort((a, b) => a - b));
        },
      ),
      { numRuns: propertyRuns(100) },
    );
  });
});
