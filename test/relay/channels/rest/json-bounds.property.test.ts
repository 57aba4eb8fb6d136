/**
 * The bounds a `rest` stream holds bodies within (relay/channels/rest/json-bounds.ts): depth and JSON
 * length measured without recursion, as JSON.stringify would write the body.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { JsonValue } from '../../../../packages/protocol/src/protocol/messages.ts';
import { beyondBounds } from '../../../../src/relay/channels/rest/json-bounds.ts';
import { propertyRuns } from '../../../support/property-runs.ts';

/** Strings without characters JSON escapes, so the measured length is JSON.stringify's exactly. */
const plain = fc.string({ unit: fc.constantFrom(...'abc XYZ_019-:.') });
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    plain,
    fc.array(tie('value')),
    fc.dictionary(plain, tie('value')),
  ),
})).value as fc.Arbitrary<JsonValue>;

function depthOf(value: JsonValue): number {
  if (value === null || typeof value !== 'object') return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + Math.max(0, ...children.map(depthOf));
}

describe('beyondBounds', () => {
  it('measures depth and length exactly as JSON.stringify writes a body without escapes', () => {
    fc.assert(
      fc.property(json, (value) => {
        const length = JSON.stringify(value).length;
        const depth = depthOf(value);
        expect(beyondBounds(value, { maxDepth: depth, maxLength: length })).toBeUndefined();
        expect(beyondBounds(value, { maxDepth: depth, maxLength: length - 1 })).toMatch(/larger than/);
        if (depth > 0)
          expect(beyondBounds(value, { maxDepth: depth - 1, maxLength: length })).toMatch(/nested deeper/);
      }),
      { numRuns: propertyRuns(300) },
    );
  });

  it('measures a body nested 100,000 deep without recursion', () => {
    const deep = JSON.parse(`${'['.repeat(100_000)}${']'.repeat(100_000)}`) as JsonValue;
    expect(beyondBounds(deep, { maxDepth: 128, maxLength: 1e9 })).toBe('nested deeper than 128 levels');
    expect(beyondBounds(JSON.parse('{"__proto__":{"a":[1]}}'), { maxDepth: 2, maxLength: 100 })).toMatch(
      /nested deeper/,
    );
  });
});
