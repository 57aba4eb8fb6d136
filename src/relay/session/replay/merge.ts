/**
 * @module relay/session/replay/merge
 * Several streams' records read as one, in `rts` order (then `seq`, then the order the streams were
 * named): each stream's read is already in that order (history/store.ts `read`), so the merge holds
 * one record per stream and never more. Ending the merge early ends every read, releasing what
 * each holds.
 */
import type { RecordedMessage } from '../../../history/store.ts';

/** A record with the time it is replayed at: its `rts` read once as epoch milliseconds (a stream's state at the range's start: the start). */
export interface TimedRecord {
  record: RecordedMessage;
  rts: number;
}

interface Head {
  iterator: AsyncIterator<TimedRecord>;
  next: TimedRecord | undefined;
}

export async function* mergeByRts(reads: readonly AsyncIterable<TimedRecord>[]): AsyncGenerator<TimedRecord> {
  const heads: Head[] = reads.map((read) => ({ iterator: read[Symbol.asyncIterator](), next: undefined }));
  try {
    for (const head of heads) head.next = await advance(head.iterator);
    for (;;) {
      let first: Head | undefined;
      for (const head of heads)
        if (head.next !== undefined && (first?.next === undefined || earlier(head.next, first.next)))
          first = head;
      if (first?.next === undefined) return;
      const due = first.next;
      first.next = await advance(first.iterator);
      yield due;
    }
  } finally {
    await Promise.all(heads.map((head) => head.iterator.return?.()));
  }
}

async function advance(iterator: AsyncIterator<TimedRecord>): Promise<TimedRecord | undefined> {
  const result = await iterator.next();
  return result.done === true ? undefined : result.value;
}

function earlier(a: TimedRecord, b: TimedRecord): boolean {
  return a.rts < b.rts || (a.rts === b.rts && a.record.seq < b.record.seq);
}
