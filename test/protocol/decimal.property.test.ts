import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareDecimals, isZeroDecimal, sumDecimals } from '../../packages/protocol/src/protocol/decimal.ts';
import { propertyRuns } from '../support/property-runs.ts';

/** Decimal strings as upstream's schemas admit them, leading zeros and negatives included. */
const decimal = fc
  .tuple(
    fc.boolean(),
    fc.stringMatching(/^\d{1,20}$/),
    fc.option(fc.stringMatching(/^\d{1,12}$/), { nil: undefined }),
  )
  .map(
    ([negative, integer, fraction]) =>
      `${negative ? '-' : ''}${integer}${fraction === undefined ? '' : `.${fraction}`}`,
  );

const places = (value: string): number => {
  const dot = value.indexOf('.');
  return dot === -1 ? 0 : value.length - dot - 1;
};

/** The value times 10^scale as a BigInt: the independent reference. */
const scaled = (value: string, scale: number): bigint => {
  const negative = value.startsWith('-');
  const [integer = '0', fraction = ''] = (negative ? value.slice(1) : value).split('.');
  const magnitude = BigInt(integer + fraction.padEnd(scale, '0'));
  return negative ? -magnitude : magnitude;
};

const format = (value: bigint, scale: number): string => {
  const negative = value < 0n;
  const digits = (negative ? -value : value).toString().padStart(scale + 1, '0');
  const integer = digits.slice(0, digits.length - scale);
  const text = scale === 0 ? integer : `${integer}.${digits.slice(digits.length - scale)}`;
  return negative ? `-${text}` : text;
};

describe('decimal properties', () => {
  it('sumDecimals is exact and printed with the most precise input places', () => {
    fc.assert(
      fc.property(fc.array(decimal, { maxLength: 8 }), (values) => {
        const scale = Math.max(0, ...values.map(places));
        const expected = values.reduce((total, value) => total + scaled(value, scale), 0n);
        expect(sumDecimals(values)).toBe(format(expected, scale));
      }),
      { numRuns: propertyRuns(500) },
    );
  });

  it('sumDecimals is exact on many unsigned sizes (the column-sum path, carries above 9)', () => {
    const size = decimal.map((v) => v.replace('-', ''));
    fc.assert(
      fc.property(fc.array(size, { minLength: 1, maxLength: 40 }), (values) => {
        const scale = Math.max(0, ...values.map(places));
        const expected = values.reduce((total, value) => total + scaled(value, scale), 0n);
        expect(sumDecimals(values)).toBe(format(expected, scale));
      }),
      { numRuns: propertyRuns(300) },
    );
  });

  it('compareDecimals agrees in sign with the BigInt comparison', () => {
    fc.assert(
      fc.property(decimal, decimal, (a, b) => {
        const scale = Math.max(places(a), places(b));
        const difference = scaled(a, scale) - scaled(b, scale);
        const expected = difference === 0n ? 0 : difference < 0n ? -1 : 1;
        expect(Math.sign(compareDecimals(a, b))).toBe(expected);
        expect(Math.sign(compareDecimals(b, a))).toBe(-expected || 0);
      }),
      { numRuns: propertyRuns(1000) },
    );
  });

  it('compareDecimals gives 0, not -0, for equal negatives spelt differently', () => {
    // Found by the property above: Math.sign(-0) is -0, which is not 0 to Object.is.
    expect(Object.is(compareDecimals('-5', '-5.0'), 0)).toBe(true);
    expect(Object.is(compareDecimals('-0.50', '-0.5'), 0)).toBe(true);
  });

  it('compareDecimals agrees with BigInt on prices of one layout (upstream 8-place text)', () => {
    const price = fc.stringMatching(/^\d{2}\.\d{8}$/);
    fc.assert(
      fc.property(price, price, (a, b) => {
        const difference = scaled(a, 8) - scaled(b, 8);
        expect(Math.sign(compareDecimals(a, b))).toBe(difference === 0n ? 0 : difference < 0n ? -1 : 1);
      }),
      { numRuns: propertyRuns(500) },
    );
  });

  it('compareDecimals sorts like the BigInt values (a total order)', () => {
    fc.assert(
      fc.property(fc.array(decimal, { maxLength: 20 }), (values) => {
        const scale = Math.max(0, ...values.map(places));
        const sorted = [...values].sort(compareDecimals).map((v) => scaled(v, scale));
        const reference = values.map((v) => scaled(v, scale)).sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
        expect(sorted).toEqual(reference);
      }),
      { numRuns: propertyRuns(300) },
    );
  });

  it('isZeroDecimal holds exactly for the spellings of zero', () => {
    const mostlyZero = fc.oneof(
      decimal,
      decimal.map((v) => v.replace(/[1-9]/g, '0')),
    );
    fc.assert(
      fc.property(mostlyZero, (value) => {
        expect(isZeroDecimal(value)).toBe(scaled(value, places(value)) === 0n);
      }),
      { numRuns: propertyRuns(500) },
    );
  });
});
