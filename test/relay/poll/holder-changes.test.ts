/**
 * The subscriber changes the poll budget's holders are made from (relay/poll/share-groups.ts): a stream
 * id's change is taken at the next turn, a further one within HOLDERS_REFRESH_MS waits for the
 * first turn after it (however many came meanwhile, once), and none is lost.
 */
import { describe, expect, it } from 'vitest';
import { HOLDERS_REFRESH_MS, HolderChanges } from '../../../src/relay/poll/share-groups.ts';

const ids = (taken: { changed: { id: string }[] }) => taken.changed.map((change) => change.id);

describe('HolderChanges', () => {
  it('takes a change at the next turn, and holds a further one to the same id until the interval passed', () => {
    const changes = new HolderChanges<never>();
    changes.add('price', 'a');
    changes.add('price', 'b');
    expect(ids(changes.take(0))).toEqual(['a', 'b']);
    // Turn after turn a wildcard's subscribers come and go: `a` changes on each of them.
    let takenOfA = 0;
    for (let now = 25; now < HOLDERS_REFRESH_MS; now += 25) {
      changes.add('price', 'a');
      takenOfA += ids(changes.take(now)).length;
    }
    expect(takenOfA).toBe(0);
    // Another id is not held back by `a`'s wait.
    changes.add('trades', 'c');
    expect(ids(changes.take(HOLDERS_REFRESH_MS - 1))).toEqual(['c']);
    // The waiting change of `a`, once, at the first turn after its interval.
    expect(ids(changes.take(HOLDERS_REFRESH_MS))).toEqual(['a']);
    expect(ids(changes.take(HOLDERS_REFRESH_MS + 25))).toEqual([]);
  });

  it('forgets when an id was taken once its interval passed: a change after a quiet spell is taken at once', () => {
    const changes = new HolderChanges<never>();
    for (let round = 0; round < 3; round++) {
      const now = round * 10 * HOLDERS_REFRESH_MS;
      changes.add('book', 'a');
      expect(ids(changes.take(now))).toEqual(['a']);
    }
  });

  it('takes every rebatched price batch at the next turn, without a wait', () => {
    const changes = new HolderChanges<string>();
    changes.regroup(['batch 1']);
    expect(changes.take(0).rebatched).toEqual(['batch 1']);
    changes.regroup(['batch 1']);
    expect(changes.take(1).rebatched).toEqual(['batch 1']);
    expect(changes.take(2).rebatched).toEqual([]);
  });
});
