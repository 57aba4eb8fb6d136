/**
 * Arbitraries of upstream bodies for property tests: valid ones, and valid ones with one place in
 * them replaced, removed or left as it is (nearly valid), the ways upstream bodies go wrong.
 */
import fc from 'fast-check';

export const digits = (min: number, max: number) => fc.stringMatching(new RegExp(`^\\d{${min},${max}}$`));
export const price8 = fc
  .tuple(fc.boolean(), digits(1, 3), digits(8, 8))
  .map(([negative, integer, fraction]) => `${negative ? '-' : ''}${integer}.${fraction}`);
export const size = fc
  .tuple(digits(1, 6), fc.option(digits(1, 6)))
  .map(([integer, fraction]) => (fraction === null ? integer : `${integer}.${fraction}`));
export const uuid = fc.uuid();
/** ISO 8601 as upstream may write it: `Z` or an offset, with milliseconds or in whole seconds. */
export const timestamp = fc
  .tuple(
    fc.date({
      min: new Date('2000-01-01T00:00:00Z'),
      max: new Date('2099-12-31T23:59:59Z'),
      noInvalidDate: true,
    }),
    fc.constantFrom('Z', '+00:00', '+02:00', '-05:30'),
    fc.boolean(),
  )
  .map(([date, zone, milliseconds]) => {
    const text = date.toISOString();
    return `${milliseconds ? text.slice(0, -1) : text.slice(0, -5)}${zone}`;
  });
export const order = fc.record({
  id: fc.string({ maxLength: 6 }),
  price: price8,
  size,
  token_id: fc.integer(),
});
export const orderBook = fc.record({
  market_id: uuid,
  bids: fc.array(order, { maxLength: 8 }),
  asks: fc.array(order, { maxLength: 8 }),
  last_price: price8,
  timestamp,
});
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

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
export const replacement: fc.Arbitrary<Json | undefined> = fc.oneof(
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
export function nearlyValid(arbitrary: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return fc
    .tuple(arbitrary as fc.Arbitrary<Json>, fc.nat(), replacement, fc.boolean())
    .map(([value, pick, substitute, keep]) => {
      if (keep) return value;
      const paths = pathsOf(value);
      return replaced(value, paths[pick % paths.length]!, substitute);
    });
}
