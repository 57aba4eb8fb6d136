/**
 * The status page's view of how far back each stream's record goes: answers come from a cache, so
 * the store is asked about a stream at most once per refresh however often the page reads.
 */
import { describe, expect, it } from 'vitest';
import type { HistoryExtent } from '../../src/history/store.ts';
import { RecordReach } from '../../src/observability/record-reach.ts';

function fakeStore(extents: Map<string, HistoryExtent>) {
  const asked: string[] = [];
  return {
    asked,
    async extent(stream: string) {
      asked.push(stream);
      if (stream === 'broken') throw new Error('disk gone');
      return extents.get(stream);
    },
  };
}

const timings = { knownMs: 30_000, unknownMs: 3_000 };

describe('RecordReach', () => {
  it('reads each stream once, then answers from the cache until its answer is due again', async () => {
    const store = fakeStore(new Map([['book:a', { oldest: 1_000, newest: 5_000, rows: 3 }]]));
    const reach = new RecordReach(store, timings);
    expect(reach.oldest(['book:a', 'book:b'], 0)('book:a')).toBeUndefined();
    await reach.settled();
    for (let now = 1; now < 3_000; now += 500) {
      const from = reach.oldest(['book:a', 'book:b'], now);
      expect(from('book:a')).toBe(1_000);
      expect(from('book:b')).toBeUndefined();
    }
    expect(store.asked).toEqual(['book:a', 'book:b']);

    // Nothing of book:b yet: asked again sooner than book:a.
    reach.oldest(['book:a', 'book:b'], 3_000);
    await reach.settled();
    expect(store.asked).toEqual(['book:a', 'book:b', 'book:b']);
    reach.oldest(['book:a', 'book:b'], 5_000);
    await reach.settled();
    expect(store.asked).toHaveLength(3);
    reach.oldest(['book:a', 'book:b'], 30_000);
    await reach.settled();
    expect(store.asked.slice(3)).toEqual(['book:a', 'book:b']);
  });

  it('leaves a stream the store cannot answer for unknown, and forgets streams no longer held', async () => {
    const store = fakeStore(new Map([['book:a', { oldest: 1_000, newest: 5_000, rows: 3 }]]));
    const reach = new RecordReach(store, timings);
    reach.oldest(['book:a', 'broken'], 0);
    await reach.settled();
    expect(reach.oldest(['book:a', 'broken'], 1)('broken')).toBeUndefined();
    expect(reach.oldest(['broken'], 2)('book:a')).toBeUndefined();
    reach.oldest(['book:a'], 3);
    await reach.settled();
    expect(store.asked.filter((stream) => stream === 'book:a')).toHaveLength(2);
  });

  it('starts no second read while one is under way', async () => {
    const store = fakeStore(new Map());
    const reach = new RecordReach(store, timings);
    reach.oldest(['book:a'], 0);
    reach.oldest(['book:a', 'book:b'], 0);
    await reach.settled();
    expect(store.asked).toEqual(['book:a']);
  });
});
