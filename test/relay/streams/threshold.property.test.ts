/**
 * The threshold decision (relay/streams/threshold.ts) against a model in integer units of 1e-8:
 * `moved` exactly when best bid, best ask or midpoint moved by the threshold or more, or came or
 * went; otherwise `same` when nothing differs, else `withheld`. No binary float on the way: prices
 * and thresholds of 8 places that a float would round are compared exact.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { thresholdFields, thresholdMove } from '../../../src/relay/streams/threshold.ts';
import { propertyRuns } from '../../support/property-runs.ts';

const UNITS = 100_000_000n;
const text = (units: bigint): string => `${units / UNITS}.${(units % UNITS).toString().padStart(8, '0')}`;

const price = fc.bigInt({ min: 0n, max: UNITS }).map(text);
/** A price next to another: often within a few units, so the boundary itself is tried. */
const state = fc.record(
  {
    best_bid: price,
    best_ask: price,
    midpoint_price: price,
    last_price: price,
    spread: price,
  },
  { requiredKeys: [] },
);

function model(from: Record<string, string>, to: Record<string, string>, threshold: string) {
  const limit = BigInt(threshold.replace('.', '').padEnd(threshold.split('.')[0]!.length + 8, '0'));
  for (const field of thresholdFields) {
    const [was, is] = [from[field], to[field]];
    if ((was === undefined) !== (is === undefined)) return 'moved';
    if (was === undefined || is === undefined) continue;
    const units = (value: string) => BigInt(value.replace('.', ''));
    const delta = units(is) - units(was);
    if ((delta < 0n ? -delta : delta) >= limit) return 'moved';
  }
  const keys = new Set([...Object.keys(from), ...Object.keys(to)]);
  return [...keys].every((key) => from[key] === to[key]) ? 'same' : 'withheld';
}

describe('thresholdMove (property)', () => {
  it('moves exactly when a watched field moved by the threshold or more', () => {
    const nudged = fc
      .tuple(state, fc.array(fc.tuple(fc.constantFrom(...thresholdFields), fc.integer({ min: -3, max: 3 }))))
      .map(([from, nudges]) => {
        const to = { ...from };
        for (const [field, by] of nudges) {
          const was = to[field];
          if (was === undefined) continue;
          const units = BigInt(was.replace('.', '')) + BigInt(by) * 1_000_000n;
          to[field] = text(units < 0n ? 0n : units);
        }
        return [from, to] as const;
      });
    const pair = fc.oneof(fc.tuple(state, state), nudged);
    const threshold = fc.oneof(
      fc.constantFrom('0.01', '0.00000001', '0.005', '1'),
      fc.bigInt({ min: 1n, max: UNITS }).map(text),
    );
    fc.assert(
      fc.property(pair, threshold, ([from, to], limit) => {
        expect(thresholdMove(from, to, limit)).toBe(model(from, to, limit));
      }),
      { numRuns: propertyRuns(500) },
    );
  });

  it('half ticks add up: the second half tick of a tick is a move, each alone is not', () => {
    const at = (bid: string) => ({ best_bid: bid, best_ask: '0.60000000', midpoint_price: '0.55000000' });
    expect(thresholdMove(at('0.50000000'), at('0.50500000'), '0.01')).toBe('withheld');
    expect(thresholdMove(at('0.50000000'), at('0.51000000'), '0.01')).toBe('moved');
    expect(thresholdMove(at('0.51000000'), at('0.50000000'), '0.01')).toBe('moved');
    // 0.1 + 0.2 is not 0.3 in binary: here it is.
    expect(thresholdMove(at('0.10000000'), at('0.40000000'), '0.3')).toBe('moved');
    expect(thresholdMove(at('0.50000000'), at('0.50999999'), '0.01')).toBe('withheld');
  });

  it('a watched field appearing or going counts as a move; one not watched only differs', () => {
    expect(thresholdMove({ best_ask: '0.6' }, { best_ask: '0.6', best_bid: '0.5' }, '1')).toBe('moved');
    expect(thresholdMove({ best_bid: '0.5' }, {}, '1')).toBe('moved');
    expect(thresholdMove({ last_price: '0.5' }, { last_price: '0.9' }, '0.01')).toBe('withheld');
    expect(thresholdMove({ last_price: '0.5' }, { last_price: '0.5' }, '0.01')).toBe('same');
    expect(thresholdMove(undefined, { best_bid: '0.5' }, '0.01')).toBe('moved');
  });
});
