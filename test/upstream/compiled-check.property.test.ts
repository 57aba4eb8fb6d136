import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { compiledCheck } from '../../src/upstream/compiled-check.ts';
import * as schemas from '../../src/upstream/schemas.ts';
import { propertyRuns } from '../support/property-runs.ts';
import { nearlyValid, orderBook, price8, timestamp, uuid } from '../support/upstream/upstream-arbitraries.ts';

// The compiled predicate must accept exactly the JSON values its zod schema accepts: valid bodies,
// and valid bodies with one value anywhere in them replaced, removed or added.

const priceSnapshot = fc.record(
  {
    market_id: uuid,
    best_bid: price8,
    best_ask: price8,
    midpoint_price: price8,
    last_price: price8,
    spread: price8,
    timestamp,
  },
  { requiredKeys: ['market_id', 'timestamp'] },
);
const priceBatch = fc.record({ data: fc.array(priceSnapshot, { maxLength: 4 }) });
const probability = fc.record({
  midpoint: fc.double({ noNaN: true, noDefaultInfinity: true }),
  best_bid: fc.double({ noNaN: true, noDefaultInfinity: true }),
  best_ask: fc.double({ noNaN: true, noDefaultInfinity: true }),
  last_trade_price: fc.double({ noNaN: true, noDefaultInfinity: true }),
  timestamp,
});
const probabilities = fc.record({
  success: fc.constant(true),
  probabilities: fc.dictionary(uuid, probability, { maxKeys: 4 }),
});
const health = fc.record({
  status: fc.string(),
  timestamp,
  services: fc.record({ database: fc.boolean(), message_queue: fc.boolean(), settlement: fc.boolean() }),
});

const pagination = fc.record({
  total: fc.nat(),
  limit: fc.nat(),
  offset: fc.nat(),
  hasMore: fc.boolean(),
});
const hex = fc.stringMatching(/^0x[0-9a-f]{1,8}$/);
const marketList = fc.record({
  success: fc.constant(true),
  markets: fc.array(
    fc.record({
      market_id: uuid,
      title: fc.string(),
      status: fc.constantFrom('ACTIVE', 'EXPIRED'),
      exchange_address: hex,
      oracle_address: hex,
      expiration_timestamp: timestamp,
      taker_fee_bps: fc.integer(),
      probability: fc.double({ noNaN: true, noDefaultInfinity: true }),
      volume: fc.double({ noNaN: true, noDefaultInfinity: true }),
    }),
    { maxLength: 3 },
  ),
  pagination,
});
const activity = fc.record({
  success: fc.constant(true),
  market_id: uuid,
  activity: fc.array(
    fc.record({
      activity_id: fc.string(),
      activity_type: fc.constant('TRADE'),
      price: price8,
      size: price8,
      total_value: price8,
      activity_timestamp: timestamp,
    }),
    { maxLength: 3 },
  ),
  pagination: fc.record({ limit: fc.nat(), offset: fc.nat(), hasMore: fc.boolean() }),
});

const cases: [string, z.ZodType, fc.Arbitrary<unknown>][] = [
  ['markets list (records keep other fields)', schemas.marketsResponse, marketList],
  ['market activity (entries keep other fields)', schemas.marketActivityResponse, activity],
  ['order book', schemas.orderBook, orderBook],
  ['batch prices', schemas.clobPriceBatchResponse, priceBatch],
  ['probabilities map', schemas.probabilitiesResponse, probabilities],
  ['health', schemas.upstreamHealth, health],
];

describe('compiledCheck', () => {
  for (const [name, schema, valid] of cases) {
    it(`accepts exactly what zod accepts: ${name}`, () => {
      const check = compiledCheck(schema);
      expect(check).toBeDefined();
      fc.assert(
        fc.property(nearlyValid(valid), (value) => {
          expect(check?.(value)).toBe(schema.safeParse(value).success);
        }),
        { numRuns: propertyRuns(1_000) },
      );
    });

    it(`accepts every valid value: ${name}`, () => {
      const check = compiledCheck(schema);
      fc.assert(fc.property(valid, (value) => check?.(value) === true));
    });
  }

  it('leaves a record with a `__proto__` key to zod, which drops that key', () => {
    const body = JSON.parse('{"success": true, "probabilities": {"__proto__": {"midpoint": "x"}}}');
    expect(compiledCheck(schemas.probabilitiesResponse)?.(body)).toBe(false);
    const parsed = schemas.probabilitiesResponse.parse(body);
    expect(Object.keys(parsed.probabilities)).toEqual([]);
  });

  it('compiles nothing for a construct it does not know, so zod validates alone', () => {
    expect(compiledCheck(z.union([z.string(), z.number()]))).toBeUndefined();
    expect(compiledCheck(z.string().max(2))).toBeUndefined();
    expect(compiledCheck(z.number().multipleOf(2))).toBeUndefined();
    expect(compiledCheck(z.object({ a: z.string() }).catchall(z.string()))).toBeUndefined();
  });

  it('accepts a record with fields it does not name, which is used as parsed, those fields kept', () => {
    const body = { success: true, probabilities: {} as Record<string, unknown> };
    body.probabilities['3f2b8c1e-5d4a-4e6f-9a7b-1c2d3e4f5a6b'] = {
      midpoint: 0.5,
      best_bid: 0.4,
      best_ask: 0.6,
      last_trade_price: 0.5,
      timestamp: '2026-11-27T12:00:00+00:00',
      venue: { name: 'x' },
    };
    expect(compiledCheck(schemas.probabilitiesResponse)?.(body)).toBe(true);
    expect(schemas.probabilitiesResponse.parse(body)).toEqual(body);
  });

  it('builds one predicate per schema', () => {
    expect(compiledCheck(schemas.orderBook)).toBe(compiledCheck(schemas.orderBook));
  });
});
