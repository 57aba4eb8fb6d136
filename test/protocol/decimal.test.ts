import { describe, expect, it } from 'vitest';
import { compareDecimals, isZeroDecimal, sumDecimals } from '../../packages/protocol/src/protocol/decimal.ts';

describe('compareDecimals', () => {
  it.each([
    ['0.5', '0.50000000', 0],
    ['0.50000000', '0.5', 0],
    ['00.5', '0.5', 0],
    ['1', '1.00000000', 0],
    ['-0', '0.000', 0],
    ['0.49999999', '0.5', -1],
    ['0.5', '0.49999999', 1],
    ['10', '9.99999999', 1],
    ['2', '10', -1],
    ['0.1', '0.09', 1],
    ['-1', '0.5', -1],
    ['0.5', '-1', 1],
    ['-1.5', '-1.25', -1],
    ['-2', '-10', 1],
    ['123.45600000', '123.456', 0],
    ['123.456', '123.4561', -1],
  ])('compare(%s, %s) has sign %i', (a, b, sign) => {
    expect(Math.sign(compareDecimals(a, b))).toBe(sign);
  });
});

describe('sumDecimals', () => {
  it.each([
    [['1.5', '2.25', '3'], '6.75'],
    [['0.1', '0.2'], '0.3'],
    [['1.50', '2'], '3.50'],
    [['1', '2'], '3'],
    [['0.00000001', '99999999.99999999'], '100000000.00000000'],
    [['123456789012345678901234567890.1', '0.9'], '123456789012345678901234567891.0'],
    [['0.000', '0'], '0.000'],
    [['7'], '7'],
    [['7.10'], '7.10'],
    [[], '0'],
  ])('sum(%j) = %s', (values, expected) => {
    expect(sumDecimals(values)).toBe(expected);
  });
});

describe('isZeroDecimal', () => {
  it.each([
    ['0', true],
    ['0.000', true],
    ['-0', true],
    ['00.0', true],
    ['0.00000001', false],
    ['10', false],
    ['1.0', false],
    ['', false],
    ['.', false],
  ])('isZeroDecimal(%j) = %s', (value, expected) => {
    expect(isZeroDecimal(value)).toBe(expected);
  });
});

describe('sumDecimals beyond the column-sum path', () => {
  it('sums many orders whose column totals carry more than one digit', () => {
    expect(sumDecimals(Array.from({ length: 25 }, () => '9.99'))).toBe('249.75');
  });

  it('sums very long decimals exactly', () => {
    const long = '1' + '0'.repeat(1200) + '.5';
    expect(sumDecimals([long, '0.25'])).toBe('1' + '0'.repeat(1200) + '.75');
  });
});
