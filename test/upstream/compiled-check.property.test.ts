import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { compiledCheck } from '../../src/upstream/compiled-check.ts';
import * as schemas from '../../src/upstream/schemas.ts';

// The compiled predicate must accept exactly the JSON values its zod schema accepts: valid bodies,
// and valid bodies with one value anywhere in them replaced, removed or added.

const digits = (min: number, max: number) => fc.stringMatching(new RegExp(`^\\d{${min},${max}}$`));
const price8 = fc
  .tuple(fc.boolean(), digits(1, 3), digits(8, 8))
  .map(([negative, integer, fraction]) => `${negative ? '-' : ''}${integer}.${fraction}`);
const size = fc
  .tuple(digits(1, 6), fc.option(digits(1, 6)))
  .map(([integer, fraction]) => (fraction === null ? integer : `${integer}.${fraction}`));
const uuid = fc.uuid();
const timestamp = fc
  .date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T23:59:59Z'), noInvalidDate: true })
  .map((date) => date.toISOString());
const order = fc.record({ id: fc.string({ maxLength: 6 }), price: price8, size, token_id: fc.integer() });
const orderBook = fc.record({
  market_id: uuid,
  bids: fc.array(order, { maxLength: 8 }),
  asks: fc.array(order, { maxLength: 8 }),
  last_price: price8,
  timestamp,
});
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

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Every place in a JSON value: the path of keys and indexes to it. */
function pathsOf(value: Json, path: (string | number)[] = []): (string | number)[][] {
  const here = [path];
  if (Array.isArray(value)) return here.concat(...value.map((item, i) => pathsOf(item, [...path, i])));
  if (value !== null && typeof value === 'object')
    return here.concat(...Object.entries(value).map(([key, item]) => pathsOf(item, [...path, key])));
  return here;
}

/** `value` with the place at `path` replaced (or, for `undefined`, removed); the root is replaced. */
function replaced(value: Json, path: (string | number)[], replacement: Json | undefined): unknown {
  if (path.length === 0) return replacement;
  const [head, ...rest] = path as [string | number, ...(string | number)[]];
  const copy: Json = Array.isArray(value) ? [...value] : { ...(value as Record<string, Json>) };
  const child = (copy as Record<string | number, Json>)[head]!;
  const next = replaced(child, rest, replacement);
  if (next === undefined && !Array.isArray(copy)) delete (copy as Record<string, Json>)[head];
  else (copy as Record<string | number, unknown>)[head] = next;
  return copy;
}

/** Values that break the upstream schemas in the usual ways, and some that happen to fit. */
const replacement: fc.Arbitrary<Json | undefined> = fc.oneof(
  fc.constant(undefined),
  fc.jsonValue() as fc.Arbitrary<Json>,
  fc.constantFrom<Json>('', '0.5', '0.50000000', '-1.00000000', '12', '1e3', 'NaN', '2025-01-01T00:00:00Z'),
  fc.constantFrom<Json>(1.5, -0, 2 ** 53, true, null, [], {}),
  price8,
  size,
  uuid,
  timestamp,
);

/** A valid value of `arbitrary`, with one place in it replaced, removed or left as it is. */
function nearlyValid(arbitrary: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return fc
    .tuple(arbitrary as fc.Arbitrary<Json>, fc.nat(), replacement, fc.boolean())
    .map(([value, pick, substitute, keep]) => {
      if (keep) return value;
      const paths = pathsOf(value);
      return replaced(value, paths[pick % paths.length]!, substitute);
    });
}

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
        { numRuns: 1_000 },
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
