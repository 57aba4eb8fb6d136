import { describe, expect, it } from 'vitest';
import { RingBuffer } from '../../src/relay/ring-buffer.ts';

describe('RingBuffer', () => {
  it('keeps the newest `capacity` items, oldest first', () => {
    const ring = new RingBuffer<number>(3);
    for (let i = 1; i <= 5; i++) ring.push(i);
    expect(ring.size).toBe(3);
    expect([0, 1, 2, 3].map((i) => ring.at(i))).toEqual([3, 4, 5, undefined]);
    ring.clear();
    expect(ring.size).toBe(0);
    expect(ring.at(0)).toBeUndefined();
  });

  it('rejects a capacity that is not a positive integer', () => {
    expect(() => new RingBuffer(0)).toThrow(RangeError);
  });
});
