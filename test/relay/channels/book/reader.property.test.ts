/**
 * The body reader (src/relay/channels/book/reader.ts) against the general way it stands in for:
 * `JSON.parse`, the `orderBook` schema, `aggregateBook`. Whatever it reads must be a body the schema
 * accepts and must aggregate, at every depth, to exactly the levels of the parsed book; and it must
 * read the bodies upstream actually sends, or it buys nothing.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareDecimals } from '../../../../packages/protocol/src/protocol/decimal.ts';
import type { BookDepth } from '../../../../packages/protocol/src/protocol/messages.ts';
import { aggregateBook, aggregateSides, OrderSpans } from '../../../../src/relay/channels/book/levels.ts';
import { readOrderBook } from '../../../../src/relay/channels/book/reader.ts';
import * as schemas from '../../../../src/upstream/schemas.ts';
import { propertyRuns } from '../../../support/property-runs.ts';
import {
  nearlyValid,
  orderBook,
  price8,
  size,
  timestamp,
  uuid,
} from '../../../support/upstream/upstream-arbitraries.ts';

const DEPTHS: BookDepth[] = [null, 10, 50];

/** Prices from a few levels, some spelled two ways ("0.5" with a leading zero, "-0" and "0"). */
const levelPrice = fc.constantFrom(
  '0.50000000',
  '00.50000000',
  '0.49000000',
  '0.51000000',
  '1.00000000',
  '10.00000000',
  '-0.00000000',
  '0.00000000',
  '-1.50000000',
);
/** Order books as upstream sends them, with levels of several orders and sizes that sum to zero. */
const busyOrder = fc.record({
  id: fc.stringMatching(/^[a-z0-9-]{1,12}$/),
  price: fc.oneof(levelPrice, price8),
  size: fc.oneof(size, fc.constantFrom('0', '0.000', '1.5', '1.50')),
  token_id: fc.oneof(
    fc.integer(),
    fc.maxSafeInteger(),
    fc.constantFrom(0, -0, 1, 2 ** 53 - 1, -(2 ** 53 - 1)),
  ),
});
const busyBook = fc.record({
  market_id: fc.oneof(
    uuid,
    uuid.map((id) => id.toUpperCase()),
  ),
  bids: fc.array(busyOrder, { maxLength: 30 }),
  asks: fc.array(busyOrder, { maxLength: 30 }),
  last_price: price8,
  timestamp,
});

/** The book as JSON text, compact (as upstream sends it) or with whitespace, keys in any order. */
function textOf(value: unknown, indent: number, reorder: boolean): string {
  const reordered = reorder ? reversedKeys(value) : value;
  return JSON.stringify(reordered, null, indent);
}

function reversedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversedKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .reverse()
      .map(([key, item]) => [key, reversedKeys(item)]),
  );
}

/** When the reader reads `text`, it is what the general way makes of it. */
function expectSameAsParsed(text: string): boolean {
  const read = readOrderBook(Buffer.from(text, 'utf8'));
  if (read === undefined) return false;
  const parsed = schemas.orderBook.safeParse(JSON.parse(text));
  expect(parsed.success).toBe(true);
  if (!parsed.success) return true;
  expect(read.market_id).toBe(parsed.data.market_id);
  expect(read.last_price).toBe(parsed.data.last_price);
  expect(read.timestamp).toBe(parsed.data.timestamp);
  for (const depth of DEPTHS) expect(aggregateSides(read, depth)).toEqual(aggregateBook(parsed.data, depth));
  return true;
}

describe('readOrderBook', () => {
  it('reads every book as upstream writes it, to the levels of the parsed book', () => {
    fc.assert(
      fc.property(busyBook, (book) => {
        expect(expectSameAsParsed(JSON.stringify(book))).toBe(true);
      }),
      { numRuns: propertyRuns(500) },
    );
  });

  it('reads whitespace and any key order the same way', () => {
    fc.assert(
      fc.property(busyBook, fc.constantFrom(0, 1, 2), fc.boolean(), (book, indent, reorder) => {
        expect(expectSameAsParsed(textOf(book, indent, reorder))).toBe(true);
      }),
      { numRuns: propertyRuns(300) },
    );
  });

  it('never reads a body the schema refuses, and reads what it reads as the schema does', () => {
    fc.assert(
      fc.property(nearlyValid(fc.oneof(orderBook, busyBook)), (value) => {
        const text = JSON.stringify(value);
        if (text === undefined) return;
        const read = expectSameAsParsed(text);
        if (!read) return;
        expect(schemas.orderBook.safeParse(value).success).toBe(true);
      }),
      { numRuns: propertyRuns(2_000) },
    );
  });

  it('never reads text that is not JSON, or not the book it looks like', () => {
    // One character inserted, removed or replaced anywhere in a valid body.
    const edited = fc
      .tuple(
        busyBook,
        fc.nat(),
        fc.constantFrom('insert', 'remove', 'replace'),
        fc.constantFrom(...' ,:{}[]"\\-.0e5x\n\u0001'),
      )
      .map(([book, at, edit, character]) => {
        const text = JSON.stringify(book);
        const i = at % text.length;
        if (edit === 'insert') return text.slice(0, i) + character + text.slice(i);
        if (edit === 'remove') return text.slice(0, i) + text.slice(i + 1);
        return text.slice(0, i) + character + text.slice(i + 1);
      });
    fc.assert(
      fc.property(edited, (text) => {
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          expect(readOrderBook(Buffer.from(text, 'utf8'))).toBeUndefined();
          return;
        }
        if (!schemas.orderBook.safeParse(json).success)
          expect(readOrderBook(Buffer.from(text))).toBeUndefined();
        else expectSameAsParsed(text);
      }),
      { numRuns: propertyRuns(3_000) },
    );
  });

  it('leaves escapes, other number forms and unknown keys to the general way', () => {
    const book = {
      market_id: '3f2b8c1e-5d4a-4e6f-9a7b-1c2d3e4f5a6b',
      bids: [{ id: 'b1', price: '0.55000000', size: '1', token_id: 1 }],
      asks: [],
      last_price: '0.56000000',
      timestamp: '2025-01-01T00:00:00.000Z',
    };
    const text = JSON.stringify(book);
    expect(readOrderBook(Buffer.from(text))).toBeDefined();
    for (const variant of [
      text.replace('"b1"', '"b\\u0031"'),
      text.replace('"token_id":1', '"token_id":1.0'),
      text.replace('"token_id":1', '"token_id":1e0'),
      text.replace('"asks":[]', '"asks":[],"extra":true'),
      text.replace('"asks":[]', '"asks":[],"asks":[]'),
      `\uFEFF${text}`,
    ]) {
      expect(readOrderBook(Buffer.from(variant))).toBeUndefined();
    }
  });
});

describe('OrderSpans.compare', () => {
  it('orders two prices as compareDecimals orders their texts', () => {
    fc.assert(
      fc.property(fc.oneof(levelPrice, price8), fc.oneof(levelPrice, price8), (a, b) => {
        const body = Buffer.from(`${a}|${b}`);
        const spans = new OrderSpans(body, [0, a.length, 0, 0, a.length + 1, body.length, 0, 0]);
        expect(Math.sign(spans.compare(0, 1)) || 0).toBe(Math.sign(compareDecimals(a, b)) || 0);
        expect(spans.price(0)).toBe(a);
      }),
      { numRuns: propertyRuns(2_000) },
    );
  });
});
