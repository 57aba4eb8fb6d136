import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSortedBy } from '../../packages/protocol/src/util/sorted.ts';

const ascending = (a: number, b: number): number => a - b;

describe('isSortedBy', () => {
  it('agrees with sorting: true exactly when sorting a copy changes nothing', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -5, max: 5 })), (items) => {
        const sorted = [...items].sort(ascending);
        expect(isSortedBy(items, ascending)).toBe(sorted.every((item, k) => item === items[k]));
      }),
    );
  });

  it('accepts equal neighbours and the empty list', () => {
    expect(isSortedBy([], ascending)).toBe(true);
    expect(isSortedBy([1, 1, 2], ascending)).toBe(true);
    expect(isSortedBy([2, 1], ascending)).toBe(false);
  });
});
