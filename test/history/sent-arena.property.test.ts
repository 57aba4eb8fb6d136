import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { PendingBatch } from '../../src/history/recorder.ts';
import { type ReadSent, SentArena, type SentPosition } from '../../src/history/sent-arena.ts';
import type { RecordedMessage } from '../../src/history/store.ts';

interface Sent {
  subject: string;
  text: string;
  position: SentPosition | undefined;
  kind: 'snapshot' | 'update';
}

/** What the arena gives back, as the record's fields: the text in `data`, the rest beside it. */
const readBack: ReadSent<string> = (subject, { text, position }, kind) => ({
  channel: 'book',
  stream: subject,
  market: subject,
  depth: undefined,
  epoch: position?.epoch ?? 'none',
  seq: position?.seq ?? -1,
  ts: '',
  rts: '',
  type: kind,
  data: text,
  checksum: undefined,
});

function expected(sent: Sent): RecordedMessage {
  return readBack(sent.subject, { text: sent.text, position: sent.position }, sent.kind);
}

function push(arena: SentArena<string>, sent: Sent): void {
  arena.push({
    subject: sent.subject,
    bytes: Buffer.from(sent.text),
    position: sent.position,
    kind: sent.kind,
  });
}

function all(batch: PendingBatch): RecordedMessage[] {
  return Array.from({ length: batch.length }, (_, index) => batch.record(index));
}

const sentMessage: fc.Arbitrary<Sent> = fc.record({
  subject: fc.constantFrom('book:a:10', 'price:b', 'trades:c'),
  // Any text, multi-byte characters included, from empty to several pages' worth.
  text: fc.oneof(
    fc.string({ unit: 'grapheme', maxLength: 200 }),
    fc.string({ minLength: 5_000, maxLength: 90_000 }),
  ),
  position: fc.option(fc.record({ epoch: fc.constantFrom('e1', 'e2'), seq: fc.nat() }), { nil: undefined }),
  kind: fc.constantFrom('snapshot' as const, 'update' as const),
});

describe('the sent messages arena', () => {
  it('gives back every message of every batch as it was sent, in order, whatever the sizes and the batches', () => {
    fc.assert(
      fc.property(fc.array(fc.array(sentMessage, { maxLength: 30 }), { maxLength: 6 }), (batches) => {
        const arena = new SentArena(readBack);
        let writing: { batch: PendingBatch; sent: Sent[] } | undefined;
        for (const sent of batches) {
          for (const message of sent) push(arena, message);
          expect(arena.length).toBe(sent.length);
          // The batch before is read only now, while this one filled the other page: neither
          // page's bytes touch the other's.
          if (writing !== undefined) {
            expect(all(writing.batch)).toEqual(writing.sent.map(expected));
            writing.batch.release();
          }
          writing = { batch: arena.take(), sent };
          expect(arena.length).toBe(0);
        }
        if (writing !== undefined) expect(all(writing.batch)).toEqual(writing.sent.map(expected));
      }),
      { numRuns: 60 },
    );
  });

  it('keeps a page past its first size and reuses it empty once its batch is written', () => {
    const arena = new SentArena(readBack);
    const large: Sent = {
      subject: 'book:a:10',
      text: 'é'.repeat(600_000),
      position: { epoch: 'e', seq: 1 },
      kind: 'snapshot',
    };
    push(arena, large);
    const first = arena.take();
    expect(first.record(0)).toEqual(expected(large));
    first.release();
    const small: Sent = {
      subject: 'price:b',
      text: '{"bid":"0.5"}',
      position: { epoch: 'e', seq: 2 },
      kind: 'update',
    };
    push(arena, small);
    push(arena, small);
    const second = arena.take();
    expect(all(second)).toEqual([expected(small), expected(small)]);
    // The large page, now filled by two small messages, starts again from its first size once
    // written; what it holds next reads back whole.
    push(arena, small);
    const third = arena.take();
    second.release();
    third.release();
    const empty = arena.take();
    empty.release();
    push(arena, large);
    push(arena, small);
    expect(all(arena.take())).toEqual([expected(large), expected(small)]);
  });
});
