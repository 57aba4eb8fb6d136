import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { inTurns } from '../../src/util/turns.ts';

describe('inTurns', () => {
  it('visits every item once, in order, each turn spending its share and at most one item more', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.nat(20), { maxLength: 60 }),
        fc.integer({ min: 1, max: 50 }),
        async (costs, perTurn) => {
          const visited: number[] = [];
          // What each synchronous run of the round spent: a microtask queued by a run's first item
          // runs once the round awaits its next turn, closing the run.
          const runs: number[] = [];
          let open = false;
          await inTurns(costs.entries(), perTurn, ([index, cost]) => {
            if (!open) {
              open = true;
              runs.push(0);
              queueMicrotask(() => {
                open = false;
              });
            }
            visited.push(index);
            runs[runs.length - 1]! += cost;
            return cost;
          });
          expect(visited).toEqual(costs.map((_, index) => index));
          const largest = Math.max(0, ...costs);
          runs.forEach((spent, run) => {
            if (run < runs.length - 1) expect(spent).toBeGreaterThanOrEqual(perTurn);
            expect(spent).toBeLessThan(perTurn + largest);
          });
        },
      ),
      { numRuns: 200 },
    );
  });

  it("runs the first turn's share before it returns", () => {
    const visited: number[] = [];
    void inTurns([1, 2, 3, 4], 2, (item) => {
      visited.push(item);
      return 1;
    });
    expect(visited).toEqual([1, 2]);
  });
});
