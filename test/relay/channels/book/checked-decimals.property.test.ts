/**
 * The book slice's own comparison and sum of upstream's checked prices and sizes
 * (src/relay/channels/book/checked-decimals.ts) against the wire package's general decimals, which
 * a client applies updates with: for every text of the checked forms they must give the same.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  compareDecimals,
  isZeroDecimal,
  sumDecimals,
} from '../../../../packages/protocol/src/protocol/decimal.ts';
import {
  comparePriceSpans,
  comparePriceTexts,
  isZeroText,
  sumSizes,
} from '../../../../src/relay/channels/book/checked-decimals.ts';
import { propertyRuns } from '../../../support/property-runs.ts';
import { price8, size } from '../../../support/upstream/upstream-arbitraries.ts';

const sign = (n: number): number => Math.sign(n) || 0;

/** Checked prices that often meet: zeros of either sign, leading zeros, one integer width. */
const nearPrice = fc.oneof(
  price8,
  fc.constantFrom('0.00000000', '-0.00000000', '00.00000000', '0.50000000', '00.50000000', '-000.50000000'),
  fc
    .tuple(fc.boolean(), fc.stringMatching(/^0{0,2}[0-9]$/), fc.stringMatching(/^[0-9]{8}$/))
    .map(([negative, integer, fraction]) => `${negative ? '-' : ''}${integer}.${fraction}`),
);
/** Sizes with zeros and leading zeros among them, and sizes whose units a Number cannot hold exactly. */
const nearSize = fc.oneof(
  size,
  fc.constantFrom('0', '0.00', '00', '000.000', '1.50', '2', '0.1', '0.2'),
  fc.stringMatching(/^[0-9]{1,12}(\.[0-9]{1,10})?$/),
);

describe('comparePriceTexts', () => {
  it('orders two checked prices as compareDecimals does', () => {
    fc.assert(
      fc.property(nearPrice, nearPrice, (a, b) => {
        expect(sign(comparePriceTexts(a, b))).toBe(sign(compareDecimals(a, b)));
      }),
      { numRuns: propertyRuns(3000) },
    );
  });

  it('counts numbers, not spellings', () => {
    expect(comparePriceTexts('-0.00000000', '0.00000000')).toBe(0);
    expect(comparePriceTexts('00.50000000', '0.50000000')).toBe(0);
    expect(sign(comparePriceTexts('9.00000000', '10.00000000'))).toBe(-1);
    expect(sign(comparePriceTexts('-9.00000000', '-10.00000000'))).toBe(1);
    expect(sign(comparePriceTexts('0.41000000', '0.40000000'))).toBe(1);
  });
});

describe('comparePriceSpans', () => {
  it('orders two prices where they sit in a body as comparePriceTexts orders their texts', () => {
    fc.assert(
      fc.property(nearPrice, nearPrice, (a, b) => {
        const body = Buffer.from(`${a},${b}`, 'latin1');
        const spans = comparePriceSpans(body, 0, a.length, a.length + 1, body.length);
        expect(sign(spans)).toBe(sign(comparePriceTexts(a, b)));
      }),
      { numRuns: propertyRuns(3000) },
    );
  });
});

describe('isZeroText', () => {
  it('is isZeroDecimal for checked prices and sizes', () => {
    fc.assert(
      fc.property(fc.oneof(nearPrice, nearSize), (value) => {
        expect(isZeroText(value)).toBe(isZeroDecimal(value));
      }),
      { numRuns: propertyRuns(2000) },
    );
  });
});

describe('sumSizes', () => {
  it('prints what sumDecimals prints, to the last decimal place', () => {
    fc.assert(
      fc.property(fc.array(nearSize, { minLength: 1, maxLength: 12 }), (sizes) => {
        expect(sumSizes(sizes)).toBe(sumDecimals(sizes));
      }),
      { numRuns: propertyRuns(3000) },
    );
  });

  it('is as exact for more sizes than a Number sum holds', () => {
    fc.assert(
      fc.property(
        fc.array(fc.stringMatching(/^9{1,8}\.9{1,6}$/), { minLength: 80, maxLength: 120 }),
        (sizes) => {
          expect(sumSizes(sizes)).toBe(sumDecimals(sizes));
        },
      ),
      { numRuns: propertyRuns(200) },
    );
  });

  it('keeps the places of the most precise size and drops leading zeros', () => {
    expect(sumSizes(['1.50', '2'])).toBe('3.50');
    expect(sumSizes(['0.1', '0.2'])).toBe('0.3');
    expect(sumSizes(['00.5', '0.5'])).toBe('1.0');
    expect(sumSizes(['0', '0.00'])).toBe('0.00');
    expect(sumSizes(['999999999999999999999', '1'])).toBe('1000000000000000000000');
  });
});
