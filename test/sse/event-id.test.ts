import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeEventId, encodeEventId, positionToken } from '../../src/sse/event-id.ts';

const epoch = fc.stringMatching(/^[A-Za-z0-9_-]{1,16}$/);
const position = fc.option(fc.record({ epoch, seq: fc.nat() }), { nil: undefined });

describe('SSE event id', () => {
  it('decodes what it encodes, for any positions', () => {
    fc.assert(
      fc.property(fc.array(position, { minLength: 1, maxLength: 100 }), (positions) => {
        const id = encodeEventId(positions.map((p) => (p === undefined ? '' : positionToken(p))));
        expect(decodeEventId(id, positions.length)).toEqual(positions);
      }),
    );
  });

  it('is compact: no market ids, seq in base 36', () => {
    expect(encodeEventId([positionToken({ epoch: 'm3Kq9ZtV', seq: 1_000 }), ''])).toBe('m3Kq9ZtV.rs,');
  });

  it.each([
    ['another number of streams', 'a.1,b.2', 3],
    ['no seq', 'abc', 1],
    ['a bad epoch', 'a b.1', 1],
    ['a bad seq', 'abc.-1', 1],
    ['an unsafe seq', 'abc.zzzzzzzzzzz', 1],
  ])('refuses %s', (_what, id, count) => {
    expect(decodeEventId(id, count)).toBeUndefined();
  });
});
