/**
 * The dispatcher sleeps until the next moment a polled target comes due: DueTimes must always say
 * the earliest time it holds and hand over exactly the times that have passed, whatever the order
 * they were added in.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DueTimes } from '../../../src/relay/poll/dispatch-queues.ts';

describe('DueTimes', () => {
  it('always holds its earliest time first and takes exactly the times passed', () => {
    const step = fc.oneof(
      fc.record({ add: fc.integer({ min: 0, max: 1_000 }) }),
      fc.record({ takeUntil: fc.integer({ min: 0, max: 1_000 }) }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 200 }), (steps) => {
        const due = new DueTimes();
        let model: number[] = [];
        for (const next of steps) {
          if ('add' in next) {
            due.add(next.add);
            model.push(next.add);
          } else {
            const passed = model.filter((at) => at <= next.takeUntil).length;
            expect(due.takeUntil(next.takeUntil)).toBe(passed);
            model = model.filter((at) => at > next.takeUntil);
          }
          expect(due.size).toBe(model.length);
          expect(due.next).toBe(model.length === 0 ? Number.POSITIVE_INFINITY : Math.min(...model));
        }
      }),
    );
  });
});
