import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fullJitterDelayMs } from '../../packages/protocol/src/util/backoff.ts';

describe('fullJitterDelayMs', () => {
  it('counts retries from 0: the first retry waits up to the base, then the ceiling doubles up to the cap', () => {
    const top = () => 0.999999;
    expect([0, 1, 2, 3, 4, 5].map((retry) => fullJitterDelayMs(retry, 100, 2000, top))).toEqual([
      99, 199, 399, 799, 1599, 1999,
    ]);
  });

  it('draws anywhere from zero (full jitter)', () => {
    expect(fullJitterDelayMs(2, 100, 2000, () => 0)).toBe(0);
    expect(fullJitterDelayMs(2, 100, 2000, () => 0.5)).toBe(200);
  });

  it('stays in [0, min(cap, base * 2^retry)) for any retry and draw', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -3, max: 2000 }),
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 1, max: 100_000 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (retry, baseMs, capMs, draw) => {
          const delay = fullJitterDelayMs(retry, baseMs, capMs, () => draw);
          expect(delay).toBeGreaterThanOrEqual(0);
          expect(delay).toBeLessThan(Math.min(capMs, baseMs * 2 ** Math.max(0, retry)));
        },
      ),
    );
  });
});
