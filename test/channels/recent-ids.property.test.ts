import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RecentIds } from '../../packages/protocol/src/channels/trades/recent-ids.ts';

describe('RecentIds', () => {
  it('remembers exactly the `capacity` most recently added distinct ids', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 20 }),
        fc.array(fc.nat(40), { maxLength: 200 }),
        (capacity, adds) => {
          const recent = new RecentIds(capacity);
          // The model: distinct ids in the order they were first added since last forgotten.
          let model: string[] = [];
          for (const n of adds) {
            const id = `a${n}`;
            expect(recent.add(id)).toBe(!model.includes(id));
            if (!model.includes(id)) model = [...model, id].slice(-capacity);
            expect(recent.size).toBe(model.length);
          }
          for (let n = 0; n <= 40; n++) expect(recent.has(`a${n}`)).toBe(model.includes(`a${n}`));
        },
      ),
    );
  });

  it('widened, keeps what it held and remembers up to the new capacity; never narrows', () => {
    const recent = new RecentIds(2);
    for (const id of ['a', 'b', 'c']) recent.add(id);
    expect([recent.has('a'), recent.size]).toEqual([false, 2]);
    recent.widen(4);
    for (const id of ['d', 'e']) recent.add(id);
    expect(['b', 'c', 'd', 'e'].map((id) => recent.has(id))).toEqual([true, true, true, true]);
    recent.widen(1);
    expect(recent.capacity).toBe(4);
    recent.add('f');
    expect([recent.has('b'), recent.size]).toEqual([false, 4]);
  });

  it('refuses a capacity that is not a positive integer', () => {
    expect(() => new RecentIds(0)).toThrow(RangeError);
    expect(() => new RecentIds(1.5)).toThrow(RangeError);
  });
});
