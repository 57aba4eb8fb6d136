/**
 * Drain delays (src/util/spread-delays.ts): every connection gets a delay within the window, the
 * delays are distinct while a slot is a millisecond wide, and no second of the window (nor any
 * window-th of it) gets more than its share, whatever the random source says.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { spreadDelays } from '../../src/util/spread-delays.ts';
import { propertyRuns } from '../support/property-runs.ts';

/** A random source replaying `values` in turn (fast-check's draws in [0, 1)). */
function replay(values: readonly number[]): () => number {
  let next = 0;
  return () => values[next++ % values.length]!;
}

const uniforms = fc.array(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), {
  minLength: 1,
  maxLength: 50,
});

describe('spreadDelays', () => {
  it('gives each connection a whole-millisecond delay within the window', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 3_000 }),
        fc.integer({ min: 1, max: 60_000 }),
        uniforms,
        (count, windowMs, values) => {
          const delays = spreadDelays(count, windowMs, replay(values));
          expect(delays).toHaveLength(count);
          // One assertion over the whole array: thousands of `expect` calls per run would make this
          // pure check take seconds.
          const outside = delays.filter(
            (delay) => !(Number.isInteger(delay) && delay >= 0 && delay < windowMs),
          );
          expect(outside).toEqual([]);
        },
      ),
      { numRuns: propertyRuns(100) },
    );
  });

  it('gives distinct delays while a slot is at least a millisecond wide', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2_000 }), uniforms, (count, values) => {
        const delays = spreadDelays(count, count * 2, replay(values));
        expect(new Set(delays).size).toBe(count);
      }),
      { numRuns: propertyRuns(100) },
    );
  });

  it('puts hardly more than its share into any stretch of the window (slots of a millisecond or more)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 10, max: 1_000 }),
        fc.integer({ min: 1_000, max: 30_000 }),
        fc.integer({ min: 2, max: 20 }),
        uniforms,
        (count, windowMs, parts, values) => {
          const delays = spreadDelays(count, windowMs, replay(values));
          const partMs = windowMs / parts;
          const perPart = new Array<number>(parts).fill(0);
          for (const delay of delays) perPart[Math.floor(delay / partMs)]! += 1;
          // Whole milliseconds move a slot's edge by less than one, hence one slot either side.
          for (const inPart of perPart) expect(inPart).toBeLessThanOrEqual(Math.ceil(count / parts) + 2);
        },
      ),
      { numRuns: propertyRuns(100) },
    );
  });
});
