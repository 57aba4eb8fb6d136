/**
 * A sent message read into the history store's record and rebuilt from it is the very text that was
 * sent, on every kind of stream (a book at any depth with its checksum, a price, a `rest` path that
 * goes out as `path`), for snapshots and updates alike, with upstream times of any precision.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { BookState } from '../../../packages/protocol/src/protocol/book.ts';
import type { BookDepth, JsonValue, PriceData } from '../../../packages/protocol/src/protocol/messages.ts';
import { codecs } from '../../../src/relay/channels/codecs.ts';
import { recordedOf, sentText } from '../../../src/relay/streams/recorded.ts';
import { type AnyStream, Stream } from '../../../src/relay/streams/stream.ts';
import { propertyRuns } from '../../support/property-runs.ts';

const market = '11111111-1111-4111-8111-111111111111';
const price = fc.integer({ min: 1, max: 99 }).map((cents) => `0.${String(cents).padStart(2, '0')}000000`);
const size = fc.stringMatching(/^[1-9]\d{0,4}(\.\d{1,3})?$/);
const level = fc.tuple(price, size);
const bookState = fc.record({
  bids: fc.uniqueArray(level, { selector: ([p]) => p, maxLength: 6 }),
  asks: fc.uniqueArray(level, { selector: ([p]) => p, maxLength: 6 }),
  last_price: price,
});
/** Upstream's `ts` as it may come: milliseconds, microseconds, or none. */
const time = fc
  .tuple(fc.integer({ min: 1_700_000_000_000, max: 1_900_000_000_000 }), fc.constantFrom('', '123', '.5'))
  .map(([ms, extra]) => {
    const iso = new Date(ms).toISOString();
    return extra === ''
      ? iso
      : extra === '.5'
        ? iso.replace(/\.\d{3}Z$/, 'Z')
        : iso.replace('Z', `${extra}Z`);
  });

/** Publishes each state and checks every message the stream sends. */
function checkRoundTrip<S>(stream: Stream<S, unknown>, states: readonly S[], times: readonly string[]): void {
  states.forEach((state, i) => {
    const { frame, kind } = stream.publish(
      state,
      times[i % times.length]!,
      times[(i + 1) % times.length]!,
      i,
    );
    if (frame === null) return;
    const record = recordedOf(stream as unknown as AnyStream, frame, kind);
    expect(sentText(record)).toBe(frame.text);
  });
}

describe('a recorded message rebuilt', () => {
  it('is the text sent, on book streams of every depth', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<BookDepth>(null, 1, 10, 50),
        fc.array(bookState, { minLength: 1, maxLength: 8 }),
        fc.array(time, { minLength: 2, maxLength: 3 }),
        (depth, states, times) => {
          const stream = new Stream({ channel: 'book', market, depth }, codecs.book, 8);
          checkRoundTrip(stream, states as BookState[], times);
        },
      ),
      { numRuns: propertyRuns(100) },
    );
  });

  it('is the text sent, on grouped book streams', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<BookDepth>(null, 10),
        fc.constantFrom('0.01', '0.05'),
        fc.array(bookState, { minLength: 1, maxLength: 8 }),
        fc.array(time, { minLength: 2, maxLength: 3 }),
        (depth, group, states, times) => {
          const stream = new Stream({ channel: 'book', market, depth, group }, codecs.book, 8);
          checkRoundTrip(stream, states as BookState[], times);
        },
      ),
      { numRuns: propertyRuns(50) },
    );
  });

  it('is the text sent, on price and rest streams', () => {
    const priceState = fc.record(
      { best_bid: price, best_ask: price, last_price: price, spread: price },
      { requiredKeys: [] },
    );
    // Bodies that end with a `checksum` key of their own, too: the message's own follows `data`.
    const body = fc.oneof(
      fc.jsonValue({ maxDepth: 3 }),
      fc.record({ rows: fc.jsonValue({ maxDepth: 2 }), checksum: fc.oneof(fc.nat(), fc.string()) }),
    );
    fc.assert(
      fc.property(
        fc.array(priceState, { minLength: 1, maxLength: 6 }),
        fc.array(body, { minLength: 1, maxLength: 6 }),
        fc.array(time, { minLength: 2, maxLength: 3 }),
        (prices, bodies, times) => {
          checkRoundTrip(
            new Stream({ channel: 'price', market }, codecs.price, 8),
            prices as PriceData[],
            times,
          );
          const rest = new Stream({ channel: 'rest', market: '/api/users/a"b\\c/positions' }, codecs.rest, 8);
          checkRoundTrip(rest, bodies as JsonValue[], times);
        },
      ),
      { numRuns: propertyRuns(100) },
    );
  });
});
