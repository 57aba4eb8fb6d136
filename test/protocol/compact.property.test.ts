/**
 * The compact encoding (docs/protocol.md "Compact encoding") loses nothing: for messages of every
 * channel, with upstream's prices and times as well as odd ones, decoding the encoded array (also
 * after a trip through JSON text, as on the wire) gives back the JSON-mode message; and whatever
 * array arrives, decoding answers with a result, never an exception.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compactPrice, expandPrice } from '../../packages/protocol/src/channels/book/wire.ts';
import { PROBABILITIES_STREAM } from '../../packages/protocol/src/channels/probabilities/probabilities.ts';
import {
  type CompactStreamIdentity,
  compactTime,
  decodeCompactStreamMessage,
  encodeCompactStreamMessage,
} from '../../packages/protocol/src/protocol/compact.ts';
import {
  type BookData,
  bookDepths,
  type Level,
  type StreamMessage,
} from '../../packages/protocol/src/protocol/messages.ts';
import { propertyRuns } from '../support/property-runs.ts';

// ------------------------------------------------------------------------------------------------
// Generators

const upstreamPrice = fc.stringMatching(/^\d{1,3}\.\d{8}$/);
/** Prices an upstream could also send: other decimal places, other spellings, anything at all. */
const oddPrice = fc.oneof(
  fc.stringMatching(/^\d{1,3}(\.\d{0,12})?$/),
  fc.constantFrom('=', '==0.5', '=0.50000000', '', '.5', '1.', '-0.50000000', '1e-8', ' 0.5', '0.5\n', 'NaN'),
  fc.string(),
  fc.string({ unit: 'grapheme' }),
);
const price = fc.oneof({ weight: 4, arbitrary: upstreamPrice }, { weight: 1, arbitrary: oddPrice });
const size = fc.oneof(fc.stringMatching(/^\d{1,5}(\.\d{1,6})?$/), fc.constant('0'), fc.string());
const levels = fc.array(fc.tuple(price, size), { maxLength: 12 }) as fc.Arbitrary<Level[]>;
const bookData: fc.Arbitrary<BookData> = fc.record(
  { bids: levels, asks: levels, last_price: price },
  { requiredKeys: ['bids', 'asks'] },
);

/** Instants `Date` can spell, from year -271821 to 275760: ISO text that round-trips. */
const exactTime = fc
  .oneof(
    fc.date({ min: new Date('2020-01-01'), max: new Date('2030-01-01'), noInvalidDate: true }),
    fc.date({ min: new Date(-8.64e15), max: new Date(8.64e15), noInvalidDate: true }),
  )
  .map((date) => date.toISOString());
/** Times that do not round-trip through `Date`: other ISO spellings and text that is no time. */
const oddTime = fc.oneof(
  fc.constantFrom(
    '',
    '2026-01-01T00:00:00Z',
    '2026-01-01T00:00:00.000+00:00',
    '2026-01-01T00:00:00.1234Z',
    '2026-01-01',
    'Thu, 01 Jan 2026 00:00:00 GMT',
    '+275761-01-01T00:00:00.000Z',
  ),
  fc.string(),
);
/** `ts` and `rts`: mostly exact and close together (either order), sometimes odd either side. */
const times = fc
  .oneof(
    { weight: 4, arbitrary: fc.tuple(exactTime, fc.integer({ min: -5_000, max: 60_000 })) },
    { weight: 1, arbitrary: fc.tuple(exactTime, exactTime) },
    { weight: 1, arbitrary: fc.tuple(oddTime, exactTime) },
    { weight: 1, arbitrary: fc.tuple(exactTime, oddTime) },
    { weight: 1, arbitrary: fc.tuple(oddTime, oddTime) },
  )
  .map(([ts, rts]) => ({
    ts,
    rts: typeof rts === 'number' ? shiftedTime(ts, rts) : rts,
  }));

function shiftedTime(iso: string, offset: number): string {
  const date = new Date(Date.parse(iso) + offset);
  return Number.isNaN(date.getTime()) ? iso : date.toISOString();
}

const decimalText = fc.stringMatching(/^\d{1,3}\.\d{2,8}$/);
const jsonNumber = fc.double({ noNaN: true, noDefaultInfinity: true });
const record = fc.dictionary(
  // `__proto__` stays an ordinary key through both encodings.
  fc.oneof(fc.string({ maxLength: 6 }), fc.constant('__proto__')),
  fc.jsonValue({ maxDepth: 2 }),
  { maxKeys: 6 },
);
const probability = fc.record({
  midpoint: jsonNumber,
  best_bid: jsonNumber,
  best_ask: jsonNumber,
  last_trade_price: jsonNumber,
  timestamp: fc.oneof(exactTime, oddTime),
});
const trade = fc.record({
  activity_id: fc.string(),
  activity_type: fc.constantFrom('trade', 'fill'),
  price: decimalText,
  size: decimalText,
  total_value: decimalText,
  activity_timestamp: fc.oneof(exactTime, oddTime),
});
const order = fc.record({ id: fc.string(), price: decimalText, size: decimalText, token_id: fc.nat() });
const side = fc.constantFrom('bid' as const, 'ask' as const);

/** Each channel's stream id and its snapshot and update data. */
const channelCases = {
  book: {
    market: fc.uuid(),
    snapshot: bookData,
    update: bookData,
  },
  price: {
    market: fc.uuid(),
    snapshot: fc.record(
      { best_bid: decimalText, best_ask: decimalText, midpoint_price: decimalText, spread: decimalText },
      { requiredKeys: [] },
    ),
    update: fc.record(
      {
        best_bid: fc.option(decimalText),
        last_price: fc.option(decimalText),
        spread: fc.option(decimalText),
      },
      { requiredKeys: [] },
    ),
  },
  trades: {
    market: fc.uuid(),
    snapshot: fc.record({ trades: fc.array(trade, { maxLength: 5 }) }),
    update: fc.record({ trades: fc.array(trade, { maxLength: 5 }) }),
  },
  market: { market: fc.uuid(), snapshot: record, update: record },
  probabilities: {
    market: fc.constant(PROBABILITIES_STREAM),
    snapshot: fc.dictionary(fc.uuid(), probability, { maxKeys: 4 }),
    update: fc.dictionary(fc.uuid(), fc.option(probability), { maxKeys: 4 }),
  },
  oracle: {
    market: fc.stringMatching(/^0x[0-9a-f]{1,64}$/),
    snapshot: fc.record({
      feed_id: fc.string(),
      price: jsonNumber,
      raw_price: fc.string(),
      expo: fc.integer(),
      publish_time: fc.integer(),
    }),
    update: fc.record({
      feed_id: fc.string(),
      price: jsonNumber,
      raw_price: fc.string(),
      expo: fc.integer(),
      publish_time: fc.integer(),
    }),
  },
  orders: {
    market: fc.uuid(),
    snapshot: fc.record({ bids: fc.array(order, { maxLength: 4 }), asks: fc.array(order, { maxLength: 4 }) }),
    update: fc.record({
      upserts: fc.array(
        fc.tuple(order, side).map(([entry, s]) => ({ ...entry, side: s })),
        { maxLength: 4 },
      ),
      removes: fc.array(fc.string(), { maxLength: 4 }),
    }),
  },
} as const;

const epoch = fc.stringMatching(/^[A-Za-z0-9_-]{8}$/);
const seq = fc.oneof(
  fc.integer({ min: 1, max: 1_000 }),
  fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
);
const depth = fc.constantFrom(null, ...bookDepths);

/**
 * A `snapshot` or `update` of any channel, built the way relay/streams/stream.ts builds it and read back
 * from its JSON text, as a JSON-mode client has it.
 */
const streamMessage: fc.Arbitrary<StreamMessage> = fc
  .constantFrom(...(Object.keys(channelCases) as Array<keyof typeof channelCases>))
  .chain((channel) => {
    const cases = channelCases[channel];
    return fc.record({
      channel: fc.constant(channel),
      type: fc.constantFrom('snapshot' as const, 'update' as const),
      market: cases.market,
      epoch,
      seq,
      times,
      depth,
      snapshot: cases.snapshot as fc.Arbitrary<unknown>,
      update: cases.update as fc.Arbitrary<unknown>,
      checksum: fc.integer({ min: 0, max: 0xffffffff }),
      // A paced subscription's conflated update names the seq it applies to.
      prevSeq: fc.option(fc.nat({ max: 1_000 })),
    });
  })
  .map(
    (m) =>
      ({
        type: m.type,
        channel: m.channel,
        market: m.market,
        epoch: m.epoch,
        seq: m.seq,
        ...(m.type === 'update' && m.prevSeq !== null && m.prevSeq < m.seq ? { prev_seq: m.prevSeq } : {}),
        ts: m.times.ts,
        rts: m.times.rts,
        ...(m.channel === 'book' ? { depth: m.depth } : {}),
        data: m.type === 'snapshot' ? m.snapshot : m.update,
        ...(m.channel === 'book' ? { checksum: m.checksum } : {}),
      }) as StreamMessage,
  )
  .map((message) => JSON.parse(JSON.stringify(message)) as StreamMessage);

const STREAM = 7;
const lookupOf = (message: StreamMessage) =>
  new Map<number, CompactStreamIdentity>([
    [
      STREAM,
      message.channel === 'book'
        ? { channel: 'book', market: message.market, depth: message.depth }
        : { channel: message.channel, market: message.market },
    ],
  ]);

// ------------------------------------------------------------------------------------------------

describe('compact price form', () => {
  it('gives back every string exactly', () => {
    fc.assert(
      fc.property(price, (text) => {
        expect(expandPrice(compactPrice(text))).toBe(text);
      }),
    );
  });

  it("shortens upstream's 8-place prices without a marker and without trailing zeros", () => {
    fc.assert(
      fc.property(upstreamPrice, (text) => {
        const short = compactPrice(text);
        expect(short).toMatch(/^\d+(\.\d*[1-9])?$/);
        expect(short.length).toBeLessThanOrEqual(text.length);
      }),
    );
    expect(compactPrice('0.78000000')).toBe('0.78');
    expect(compactPrice('1.00000000')).toBe('1');
    expect(compactPrice('100.00000000')).toBe('100');
    expect(compactPrice('0.00000001')).toBe('0.00000001');
    expect(compactPrice('0.5')).toBe('=0.5');
    expect(compactPrice('=1.00000000')).toBe('==1.00000000');
    expect(expandPrice('0.78')).toBe('0.78000000');
    expect(expandPrice('1')).toBe('1.00000000');
  });

  it('refuses text that is neither marked nor a decimal of at most 8 places', () => {
    for (const text of ['', '.5', '1.', '0.123456789', '-1', '1e-8', 'abc', ' 1'])
      expect(expandPrice(text)).toBeUndefined();
  });
});

describe('compact times', () => {
  it('are milliseconds exactly when Date spells the text back', () => {
    expect(compactTime('2026-01-01T00:00:00.123Z')).toBe(Date.UTC(2026, 0, 1, 0, 0, 0, 123));
    expect(compactTime('2026-01-01T00:00:00Z')).toBe('2026-01-01T00:00:00Z');
    expect(compactTime('')).toBe('');
  });
});

describe('compact stream messages', () => {
  it('decode back to the JSON-mode message, also after a trip through JSON text', () => {
    fc.assert(
      fc.property(streamMessage, (message) => {
        const encoded = encodeCompactStreamMessage(message, STREAM);
        const lookup = lookupOf(message);
        expect(decodeCompactStreamMessage(encoded, lookup)).toStrictEqual({ ok: true, message });
        const decoded = decodeCompactStreamMessage(JSON.parse(JSON.stringify(encoded)), lookup);
        expect(decoded).toStrictEqual({ ok: true, message });
        // Even the key order is JSON mode's, so the decoded message serialises to the same text.
        if (decoded.ok) expect(JSON.stringify(decoded.message)).toBe(JSON.stringify(message));
      }),
      { numRuns: propertyRuns(500) },
    );
  });

  it('lay out a book update as the spec shows', () => {
    const message: StreamMessage = {
      type: 'update',
      channel: 'book',
      market: '3f0c5a4e-8b7d-4c1a-9e2f-1a2b3c4d5e6f',
      epoch: 'k3J9xQ',
      seq: 42,
      ts: '2026-01-01T00:00:00.100Z',
      rts: '2026-01-01T00:00:00.350Z',
      depth: 10,
      data: { bids: [['0.78000000', '120.5']], asks: [['0.80000000', '0']], last_price: '0.5' },
      checksum: 12345,
    };
    expect(encodeCompactStreamMessage(message, 3)).toEqual([
      'u',
      3,
      'k3J9xQ',
      42,
      Date.UTC(2026, 0, 1, 0, 0, 0, 100),
      250,
      [[['0.78', '120.5']], [['0.8', '0']], '=0.5'],
      12345,
    ]);
  });

  it('answer anything else with an error result, never an exception', () => {
    const lookup = new Map<number, CompactStreamIdentity>([
      [1, { channel: 'book', market: 'm', depth: 10 }],
      [2, { channel: 'price', market: 'm' }],
    ]);
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const result = decodeCompactStreamMessage(value, lookup);
        expect(typeof result.ok).toBe('boolean');
      }),
    );
    // Valid messages with one element replaced, dropped or added.
    fc.assert(
      fc.property(streamMessage, fc.nat(8), fc.jsonValue(), fc.nat(2), (message, at, replacement, how) => {
        const encoded: unknown[] = [...encodeCompactStreamMessage(message, STREAM)];
        if (how === 0) encoded[at] = replacement;
        else if (how === 1) encoded.splice(at, 1);
        else encoded.push(replacement);
        const result = decodeCompactStreamMessage(encoded, lookupOf(message));
        expect(typeof result.ok).toBe('boolean');
      }),
    );
  });

  it('name what is wrong', () => {
    const lookup = new Map<number, CompactStreamIdentity>([
      [1, { channel: 'book', market: 'm', depth: 10 }],
      [2, { channel: 'price', market: 'm' }],
    ]);
    const book = (changes: Record<number, unknown>) => {
      const base: unknown[] = ['u', 1, 'e', 2, 1_700_000_000_000, 5, [[], []], 0];
      for (const [at, value] of Object.entries(changes)) base[Number(at)] = value;
      return base;
    };
    expect(decodeCompactStreamMessage(book({}), lookup).ok).toBe(true);
    const malformed = [
      null,
      {},
      'u',
      [],
      book({ 0: 'x' }),
      book({ 1: 0 }),
      book({ 1: 1.5 }),
      book({ 2: 3 }),
      book({ 3: -1 }),
      book({ 3: '2' }),
      book({ 4: 1.5 }),
      book({ 4: 9e15 }),
      book({ 4: 'x', 5: 5 }),
      book({ 5: 0.5 }),
      book({ 5: null }),
      book({ 6: [[], [], '0.123456789'] }),
      book({ 6: [[['0.5', 1]], []] }),
      book({ 6: [[[0.5, '1']], []] }),
      book({ 6: [[['abc', '1']], []] }),
      book({ 6: [[['0.5', '1', '2']], []] }),
      book({ 6: [[]] }),
      book({ 6: {} }),
      book({ 7: -1 }),
      book({ 7: 2 ** 32 }),
      book({ 7: undefined }),
      ['u', 2, 'e', 2, 1_700_000_000_000, 5, [], 0],
      ['u', 2, 'e', 2, 1_700_000_000_000, 5, null],
      ['u', 2, 'e', 2, 1_700_000_000_000, 5],
    ];
    for (const value of malformed) {
      const result = decodeCompactStreamMessage(value, lookup);
      expect(result, JSON.stringify(value)).toMatchObject({ ok: false, reason: 'malformed' });
    }
    expect(decodeCompactStreamMessage(['u', 9, 'e', 2, 0, 0, {}], lookup)).toMatchObject({
      ok: false,
      reason: 'unknown_stream',
    });
  });
});
