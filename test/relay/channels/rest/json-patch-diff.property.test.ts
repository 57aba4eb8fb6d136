/**
 * The `rest` diff (relay/channels/rest/json-patch-diff.ts): applying its patch to the previous body with a
 * stock RFC 6902 library (fast-json-patch) gives the next body exactly; the SDK's own applier agrees;
 * one changed record of a keyed list is one small operation.
 */
import fc from 'fast-check';
import jsonPatch from 'fast-json-patch';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../../../packages/protocol/src/channels/checksum.ts';
import {
  applyPatch,
  type PatchOperation,
  restChecksum,
} from '../../../../packages/protocol/src/protocol/json-patch.ts';
import type { JsonValue } from '../../../../packages/protocol/src/protocol/messages.ts';
import { diffJson, listKeyOf, MAX_DIFF_DEPTH } from '../../../../src/relay/channels/rest/json-patch-diff.ts';
import { propertyRuns } from '../../../support/property-runs.ts';

/** The diff of two bodies it does not give up on (all of these tests' but the costly ones). */
const diff = (prev: JsonValue, next: JsonValue): PatchOperation[] => {
  const patch = diffJson(prev, next);
  if (patch === undefined) throw new Error('the diff gave up');
  return patch;
};

const stockApply = (document: JsonValue, patch: readonly PatchOperation[]): JsonValue =>
  // Upstream bodies are data: a member named `__proto__` is one like any other.
  jsonPatch.applyPatch(structuredClone(document), structuredClone(patch), true, false, false).newDocument;

const json: fc.Arbitrary<JsonValue> = fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<JsonValue>;

/** Records keyed by id-like fields, as upstream's lists are: values drawn from a small pool. */
const position = fc.record({
  market_id: fc.constantFrom('m1', 'm2', 'm3', 'm4'),
  outcome: fc.constantFrom('YES', 'NO'),
  quantity: fc.constantFrom('1.5', '2', '10.25'),
  current_value: fc.constantFrom('0.4', '7'),
});
const uniqueBy = <T>(list: T[], key: (item: T) => string): T[] => {
  const seen = new Set<string>();
  return list.filter((item) => !seen.has(key(item)) && seen.add(key(item)) !== undefined);
};
const positions = fc
  .array(position, { maxLength: 8 })
  .map((list) => uniqueBy(list, (p) => `${p.market_id}/${p.outcome}`));
const comment = fc.record({
  comment_id: fc.constantFrom('c1', 'c2', 'c3', 'c4', 'c5'),
  like_count: fc.nat({ max: 3 }),
  replies: fc.array(
    fc.record({ comment_id: fc.constantFrom('r1', 'r2', 'r3'), like_count: fc.nat({ max: 2 }) }),
    {
      maxLength: 3,
    },
  ),
});
const comments = fc.array(comment, { maxLength: 6 }).map((list) =>
  uniqueBy(list, (c) => c.comment_id).map((c) => ({
    ...c,
    replies: uniqueBy(c.replies, (r) => r.comment_id),
  })),
);
const body = fc.record({
  success: fc.boolean(),
  total_value_usd: fc.constantFrom('0', '12.50'),
  positions,
  comments,
  any: json,
});

describe('diffJson (property)', () => {
  it('a stock JSON Patch library turns any previous value into the next with its patch', () => {
    fc.assert(
      fc.property(json, json, (prev, next) => {
        expect(stockApply(prev, diff(prev, next))).toEqual(next);
        expect(applyPatch(prev, diff(prev, next))).toEqual(next);
      }),
      { numRuns: propertyRuns(400) },
    );
  });

  it('never writes a path through `__proto__` or `constructor/prototype`: a stock library applies it with its defaults', () => {
    const proto = (value: JsonValue): JsonValue => JSON.parse(`{"__proto__":${JSON.stringify(value)}}`);
    const cases: Array<[JsonValue, JsonValue]> = [
      [{ any: {} }, { any: proto(0) }],
      [{ any: proto(0) }, { any: proto(1) }],
      [{ any: proto({ a: 1 }) }, { any: proto({ a: 2 }) }],
      [{ any: proto(0) }, { any: {} }],
      [{ list: [{ id: 'a', x: {} }] }, { list: [{ id: 'a', x: proto(null) }] }],
      [{ any: { constructor: { prototype: 1 } } }, { any: { constructor: { prototype: 2 } } }],
      [{}, proto('root')],
    ];
    for (const [prev, next] of cases) {
      const patch = diff(prev, next);
      expect(patch.length).toBeGreaterThan(0);
      for (const { path } of patch)
        expect(path).not.toMatch(/\/__proto__(\/|$)|\/constructor\/prototype(\/|$)/);
      expect(jsonPatch.applyPatch(structuredClone(prev), structuredClone(patch)).newDocument).toEqual(next);
      expect(applyPatch(prev, patch)).toEqual(next);
    }
  });

  it('keyed lists: patched into the next body by the stock library and by the SDK', () => {
    fc.assert(
      fc.property(body, body, (prev, next) => {
        const patch = diff(prev, next);
        expect(stockApply(prev, patch)).toEqual(next);
        expect(applyPatch(prev, patch)).toEqual(next);
        expect(diff(next, structuredClone(next))).toEqual([]);
      }),
      { numRuns: propertyRuns(400) },
    );
  });

  it('one changed record of a keyed list is one operation at that record', () => {
    fc.assert(
      fc.property(
        positions.filter((list) => list.length > 0),
        fc.nat(),
        (list, pick) => {
          const index = pick % list.length;
          const next = list.map((p, i) => (i === index ? { ...p, quantity: `${p.quantity}1` } : p));
          expect(diff({ positions: list }, { positions: next })).toEqual([
            { op: 'replace', path: `/positions/${index}/quantity`, value: next[index]!.quantity },
          ]);
        },
      ),
      { numRuns: propertyRuns(100) },
    );
  });

  it('a new entry on top of a full list is one add and one remove', () => {
    const list = Array.from({ length: 20 }, (_, i) => ({ activity_id: `a${i}`, size: '1' }));
    const next = [{ activity_id: 'new', size: '2' }, ...list.slice(0, 19)];
    expect(diff({ activities: list }, { activities: next })).toEqual([
      { op: 'remove', path: '/activities/19' },
      { op: 'add', path: '/activities/0', value: { activity_id: 'new', size: '2' } },
    ]);
  });

  it('finds the key per list: positions by market and outcome, holders by username', () => {
    const yes = { market_id: 'm', outcome: 'YES' };
    const no = { market_id: 'm', outcome: 'NO' };
    expect(listKeyOf([yes, no], [no])).toEqual(['market_id', 'outcome']);
    expect(listKeyOf([{ username: 'a', quantity: 1 }], [])).toEqual(['username']);
    expect(listKeyOf([1, 2], [3])).toBeUndefined();
  });
});

describe('diffJson gives up past its bounds (the body is then sent whole)', () => {
  const records = (count: number) =>
    Array.from({ length: count }, (_, i) => ({ id: `r${i}`, name: `record ${i}`, value: String(i) }));
  const shuffled = <T>(list: readonly T[], seed: number): T[] => {
    const copy = [...list];
    let state = seed;
    for (let i = copy.length - 1; i > 0; i--) {
      state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
      const j = state % (i + 1);
      [copy[i], copy[j]] = [copy[j]!, copy[i]!];
    }
    return copy;
  };

  it('a keyed list of 5,000 records shuffled: no patch', () => {
    const list = records(5_000);
    expect(diffJson({ items: list }, { items: shuffled(list, 1) })).toBeUndefined();
  });

  it('a long keyed list with a few records moved, added or gone still gets its patch', () => {
    const list = records(5_000);
    const next = [
      list[4_999]!,
      { id: 'new', name: 'n', value: '0' },
      ...list.slice(0, 2_000),
      ...list.slice(2_001, 4_999),
    ];
    const patch = diff({ items: list }, { items: next });
    expect(patch.length).toBeLessThan(10);
    expect(applyPatch({ items: list }, patch)).toEqual({ items: next });
  });

  it('any reordering of a short keyed list is patched', () => {
    fc.assert(
      fc.property(fc.nat({ max: 60 }), fc.nat(), (count, seed) => {
        const list = records(count);
        const next = shuffled(list, seed);
        expect(applyPatch({ items: list }, diff({ items: list }, { items: next }))).toEqual({ items: next });
      }),
      { numRuns: propertyRuns(100) },
    );
  });

  it(`bodies nested deeper than ${MAX_DIFF_DEPTH} levels: no patch, and no stack overflow at 100,000`, () => {
    const nested = (depth: number, leaf: JsonValue): JsonValue =>
      JSON.parse(`${'{"a":'.repeat(depth)}${JSON.stringify(leaf)}${'}'.repeat(depth)}`);
    expect(diffJson(nested(MAX_DIFF_DEPTH + 1, 1), nested(MAX_DIFF_DEPTH + 1, 2))).toBeUndefined();
    expect(diffJson(nested(100_000, 1), nested(100_000, 2))).toBeUndefined();
    expect(diff(nested(MAX_DIFF_DEPTH - 1, 1), nested(MAX_DIFF_DEPTH - 1, 2))).toHaveLength(1);
  });
});

describe('the rest checksum', () => {
  it('is the CRC-32 of RFC 8785 canonical JSON: members sorted, no whitespace', () => {
    expect(canonicalJson({ b: [1, 'x', null], a: { d: true, c: 1.5 } })).toBe(
      '{"a":{"c":1.5,"d":true},"b":[1,"x",null]}',
    );
    // The CRC-32 of the bytes {"a":1}, as zlib (and every CRC-32 library) computes it.
    expect(restChecksum({ a: 1 })).toBe(1444654255);
  });

  it('does not depend on member order', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), json, { maxKeys: 5 }), (object) => {
        const reversed = Object.fromEntries(Object.entries(object).reverse());
        expect(restChecksum(reversed as JsonValue)).toBe(restChecksum(object as JsonValue));
      }),
      { numRuns: propertyRuns(100) },
    );
  });
});
