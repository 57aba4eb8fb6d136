import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { compiledCheck } from '../../src/upstream/compiled-check.ts';
import * as schemas from '../../src/upstream/schemas.ts';
import { propertyRuns } from '../support/property-runs.ts';
import { nearlyValid, orderBook, price8, timestamp, uuid } from '../support/upstream-arbitraries.ts';

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

const cases: [string, z.ZodType, fc.Arbitrary<unknown>][] = [
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
    expect(compiledCheck(schemas.marketsResponse)).toBeUndefined(); // nonnegative(): a check not compiled
    expect(compiledCheck(z.union([z.string(), z.number()]))).toBeUndefined();
    expect(compiledCheck(z.string().min(2))).toBeUndefined();
  });

  it('builds one predicate per schema', () => {
    expect(compiledCheck(schemas.orderBook)).toBe(compiledCheck(schemas.orderBook));
  });
});
