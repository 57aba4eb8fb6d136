/**
 * The checksum test vectors (clients/vectors/checksum-v1.json, docs/protocol.md "Checksum test
 * vectors") against the TypeScript implementation: the file is what the reference generator makes
 * now, every step replays to its book with the SDK's apply, and every checksum agrees with the one
 * written again from the document (node:zlib), and every grouped step is its upstream levels summed
 * into the case's step. The Python client's tests read the same file.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  applyBookUpdate,
  type BookState,
  bookChecksum,
  bookChecksumInput,
} from '../../packages/protocol/src/protocol/book.ts';
import { groupBook } from '../../packages/protocol/src/protocol/group.ts';
import { limitDepth } from '../../src/relay/channels/book/codec.ts';
import { CHECKSUM_VECTORS_FILE, type ChecksumVectors, checksumVectors } from '../support/checksum-vectors.ts';
import { referenceBookChecksum } from '../support/reference-checksum.ts';

const vectors = JSON.parse(readFileSync(CHECKSUM_VECTORS_FILE, 'utf8')) as ChecksumVectors;

describe('checksum test vectors', () => {
  it('the file is what the reference generator makes (regenerate with npm run vectors)', () => {
    expect(vectors).toEqual(checksumVectors());
  });

  it('covers the cases a client gets wrong', () => {
    const names = vectors.cases.map((c) => c.name);
    for (const tricky of [
      'empty-book',
      'beyond-25-levels',
      'depth-10-window',
      'size-text',
      'changes-in-any-order',
      'group-0.05-full',
      'group-0.01-depth-5',
    ])
      expect(names).toContain(tricky);
    // A checksum at or above 2^31: a signed CRC-32 would print it negative.
    expect(vectors.cases.some((c) => c.steps.some((step) => step.checksum >= 2 ** 31))).toBe(true);
  });

  it('carries the worked example and the resume example of docs/protocol.md', () => {
    const guide = vectors.cases.find((c) => c.name === 'protocol-guide')!;
    expect(guide.steps.map((step) => step.checksum)).toEqual([
      3691452200, 3531116550, 1692016501, 1048786922,
    ]);
    expect(guide.steps[0]!.input).toBe('0.52000000:150:0.53000000:75.25:0.51000000:20.5:0.54000000:10');
  });

  for (const vector of vectors.cases) {
    it(`${vector.name}: each step applies to its book and checksum`, () => {
      let book: BookState = { bids: [], asks: [] };
      for (const [index, step] of vector.steps.entries()) {
        book = applyBookUpdate(step.type === 'snapshot' ? { bids: [], asks: [] } : book, step.data);
        expect(book, `step ${index}`).toEqual(step.book);
        expect(bookChecksumInput(book), `step ${index}`).toBe(step.input);
        expect(bookChecksum(book), `step ${index}`).toBe(step.checksum);
        expect(referenceBookChecksum(book.bids, book.asks), `step ${index}`).toBe(step.checksum);
        if (vector.group !== undefined)
          expect(
            limitDepth(groupBook(step.grouped_from!, vector.group), vector.depth),
            `step ${index}`,
          ).toEqual(step.book);
        if (vector.depth !== null) {
          expect(book.bids.length).toBeLessThanOrEqual(vector.depth);
          expect(book.asks.length).toBeLessThanOrEqual(vector.depth);
        }
      }
    });
  }
});
