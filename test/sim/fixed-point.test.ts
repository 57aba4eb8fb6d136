/**
 * @module test/sim/decimal
 * Exact fixed-point formatting used for every price and size the simulator emits.
 */
import { describe, expect, it } from 'vitest';
import { formatFixed, formatPrice, formatTrimmed, rescale } from '../../src/sim/fixed-point.ts';

describe('sim decimals', () => {
  it('formats prices with exactly 8 decimals', () => {
    expect(formatPrice(53_700_000n)).toBe('0.53700000');
    expect(formatPrice(100_000_000n)).toBe('1.00000000');
    expect(formatPrice(0n)).toBe('0.00000000');
  });

  it('trims sizes without losing digits', () => {
    expect(formatTrimmed(10_000_000n, 6)).toBe('10');
    expect(formatTrimmed(125_500_000n, 6)).toBe('125.5');
    expect(formatTrimmed(3_125_000n, 6)).toBe('3.125');
    expect(formatTrimmed(1n, 6)).toBe('0.000001');
    expect(formatTrimmed(0n, 6)).toBe('0');
  });

  it('pads, signs and rounds half away from zero', () => {
    expect(formatFixed(-1_505n, 3, 4)).toBe('-1.5050');
    expect(rescale(12_345n, 3, 2)).toBe(1_235n);
    expect(rescale(-12_345n, 3, 2)).toBe(-1_235n);
    expect(rescale(12n, 0, 2)).toBe(1_200n);
    expect(() => formatFixed(1n, 4, 2)).toThrow(RangeError);
  });
});
