import { crc32 } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  applyBookUpdate,
  type BookState,
  bookChecksum,
  bookChecksumInput,
} from '../../packages/protocol/src/protocol/book.ts';
import type { Level } from '../../packages/protocol/src/protocol/messages.ts';

const price = (n: number): string => (n / 100).toFixed(8);

describe('applyBookUpdate', () => {
  const state: BookState = {
    bids: [
      ['0.60000000', '10'],
      ['0.50000000', '5'],
      ['0.40000000', '1.5'],
    ],
    asks: [
      ['0.70000000', '3'],
      ['0.80000000', '4'],
    ],
    last_price: '0.65000000',
  };

  it('inserts, resizes and removes levels, keeping best-first order on both sides', () => {
    const next = applyBookUpdate(state, {
      bids: [
        ['0.65000000', '2'],
        ['0.50000000', '0'],
        ['0.40000000', '7.25'],
        ['0.10000000', '1'],
      ],
      asks: [
        ['0.69000000', '1'],
        ['0.75000000', '2'],
        ['0.80000000', '0'],
      ],
    });
    expect(next).toStrictEqual({
      bids: [
        ['0.65000000', '2'],
        ['0.60000000', '10'],
        ['0.40000000', '7.25'],
        ['0.10000000', '1'],
      ],
      asks: [
        ['0.69000000', '1'],
        ['0.70000000', '3'],
        ['0.75000000', '2'],
      ],
      last_price: '0.65000000',
    });
  });

  it('does not modify the state it is given', () => {
    const copy = structuredClone(state);
    applyBookUpdate(state, { bids: [['0.60000000', '0']], asks: [['0.70000000', '9']], last_price: '0.1' });
    expect(state).toStrictEqual(copy);
  });

  it('replaces last_price only when the update carries one', () => {
    expect(applyBookUpdate(state, { bids: [], asks: [] }).last_price).toBe('0.65000000');
    expect(applyBookUpdate(state, { bids: [], asks: [], last_price: '0.70000000' }).last_price).toBe(
      '0.70000000',
    );
    expect(applyBookUpdate({ bids: [], asks: [] }, { bids: [], asks: [] })).toStrictEqual({
      bids: [],
      asks: [],
    });
  });

  it('matches levels by numeric price and takes the update price text', () => {
    const next = applyBookUpdate(state, { bids: [['0.6', '11']], asks: [['0.8', '0']] });
    expect(next.bids[0]).toEqual(['0.6', '11']);
    expect(next.bids).toHaveLength(3);
    expect(next.asks).toEqual([['0.70000000', '3']]);
  });

  it('ignores the removal of a level it does not hold', () => {
    const next = applyBookUpdate(state, { bids: [['0.55000000', '0']], asks: [['0.90000000', '0']] });
    expect(next).toStrictEqual(state);
  });

  it('accepts an update whose levels are not best first, and lets the last change to a price win', () => {
    const next = applyBookUpdate(
      { bids: [], asks: [] },
      {
        bids: [
          ['0.10000000', '1'],
          ['0.30000000', '3'],
          ['0.20000000', '2'],
          ['0.30000000', '4'],
        ],
        asks: [
          ['0.90000000', '1'],
          ['0.80000000', '5'],
          ['0.80000000', '0'],
        ],
      },
    );
    expect(next.bids).toEqual([
      ['0.30000000', '4'],
      ['0.20000000', '2'],
      ['0.10000000', '1'],
    ]);
    expect(next.asks).toEqual([['0.90000000', '1']]);
  });

  it('treats only the exact string "0" as a removal', () => {
    const next = applyBookUpdate(state, { bids: [['0.60000000', '0.00']], asks: [] });
    expect(next.bids[0]).toEqual(['0.60000000', '0.00']);
  });
});

describe('bookChecksumInput / bookChecksum', () => {
  it('interleaves bid and ask levels and drops the final colon', () => {
    const book: BookState = {
      bids: [
        ['0.50000000', '10'],
        ['0.40000000', '2.5'],
      ],
      asks: [['0.60000000', '3']],
      last_price: '0.55000000',
    };
    const expected = '0.50000000:10:0.60000000:3:0.40000000:2.5';
    expect(bookChecksumInput(book)).toBe(expected);
    expect(bookChecksum(book)).toBe(crc32(expected));
  });

  it('gives the empty string and 0 for an empty book', () => {
    expect(bookChecksumInput({ bids: [], asks: [] })).toBe('');
    expect(bookChecksum({ bids: [], asks: [] })).toBe(0);
  });

  it('covers one side alone', () => {
    const asksOnly: BookState = { bids: [], asks: [['0.60000000', '3']] };
    expect(bookChecksumInput(asksOnly)).toBe('0.60000000:3');
    expect(bookChecksum(asksOnly)).toBe(crc32('0.60000000:3'));
  });

  it('covers only the best 25 levels per side, with uneven sides', () => {
    const bids: Level[] = Array.from({ length: 30 }, (_, i) => [price(49 - i), String(i + 1)]);
    const asks: Level[] = Array.from({ length: 3 }, (_, i) => [price(51 + i), `0.${i}5`]);
    let expected = '';
    for (let i = 0; i < 25; i++) {
      expected += `${price(49 - i)}:${i + 1}:`;
      if (i < 3) expected += `${price(51 + i)}:0.${i}5:`;
    }
    expected = expected.slice(0, -1);
    expect(bookChecksumInput({ bids, asks })).toBe(expected);
    expect(bookChecksumInput({ bids, asks }).startsWith('0.49000000:1:0.51000000:0.05:0.48000000:2:')).toBe(
      true,
    );
    expect(bookChecksumInput({ bids, asks }).endsWith('0.25000000:25')).toBe(true);
    expect(bookChecksum({ bids, asks })).toBe(crc32(expected));
  });

  it('returns an unsigned value when the CRC has its top bit set', () => {
    const book: BookState = { bids: [['1', 'x']], asks: [] };
    expect(crc32('1:x')).toBeGreaterThan(2 ** 31);
    expect(bookChecksum(book)).toBe(crc32('1:x'));
  });

  it("gives the same checksum with the portable CRC-32 (the SDK) as with Node's (the relay)", () => {
    const text = fc.string({ unit: 'grapheme', maxLength: 12 });
    const level = fc.tuple(text, text);
    fc.assert(
      fc.property(fc.array(level, { maxLength: 30 }), fc.array(level, { maxLength: 30 }), (bids, asks) => {
        const book: BookState = { bids, asks };
        expect(bookChecksum(book, crc32)).toBe(bookChecksum(book));
      }),
    );
  });
});
