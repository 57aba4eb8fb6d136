/**
 * @module protocol/decimal
 * Exact arithmetic on the decimal strings that carry prices and sizes (protocol.md "`book` data":
 * "no binary floats on the way"). Shared with the browser client SDK, so no Node imports.
 *
 * Inputs are plain decimal strings as the upstream schemas admit them (`-?\d+(\.\d+)?`); they are
 * validated at the edge (upstream/schemas.ts), not here, to keep the hot path cheap.
 */
import Big from 'big.js';

const MINUS = 45; // '-'
const DOT = 46; // '.'
const ZERO = 48; // '0'

/**
 * Numeric comparison of two decimal strings: negative, zero or positive as a < b, a == b, a > b
 * ("0.5" equals "0.50000000"). Digit by digit without allocating, because it runs once per level
 * on every poll (aggregation, diff, applying updates).
 */
export function compareDecimals(a: string, b: string): number {
  if (a === b) return 0;
  // Fast path for upstream's usual case, two unsigned prices of one layout ("0.41000000" vs
  // "0.40000000"): there text order is numeric order.
  if (
    a.length === b.length &&
    a.charCodeAt(0) !== MINUS &&
    b.charCodeAt(0) !== MINUS &&
    a.indexOf('.') === b.indexOf('.')
  ) {
    return a < b ? -1 : 1;
  }
  const aNegative = a.charCodeAt(0) === MINUS;
  const bNegative = b.charCodeAt(0) === MINUS;
  if (aNegative !== bNegative) {
    if (isZeroDecimal(a) && isZeroDecimal(b)) return 0; // "-0" == "0"
    return aNegative ? -1 : 1;
  }
  const magnitude = compareMagnitudes(a, aNegative ? 1 : 0, b, bNegative ? 1 : 0);
  // `0 - x`, not `-x`: equal negatives ("-5", "-5.0") compare 0, not -0.
  return aNegative ? 0 - magnitude : magnitude;
}

/** Compares the unsigned decimals a[aStart..] and b[bStart..]. */
function compareMagnitudes(a: string, aStart: number, b: string, bStart: number): number {
  const aDot = integerEnd(a, aStart);
  const bDot = integerEnd(b, bStart);
  let ai = skipLeadingZeros(a, aStart, aDot);
  let bi = skipLeadingZeros(b, bStart, bDot);
  // More significant integer digits means larger.
  const lengthDifference = aDot - ai - (bDot - bi);
  if (lengthDifference !== 0) return lengthDifference;
  for (; ai < aDot; ai++, bi++) {
    const d = a.charCodeAt(ai) - b.charCodeAt(bi);
    if (d !== 0) return d;
  }
  // Fractions: a missing digit counts as 0.
  ai = aDot + 1;
  bi = bDot + 1;
  while (ai < a.length || bi < b.length) {
    const da = ai < a.length ? a.charCodeAt(ai) : ZERO;
    const db = bi < b.length ? b.charCodeAt(bi) : ZERO;
    if (da !== db) return da - db;
    ai++;
    bi++;
  }
  return 0;
}

function integerEnd(value: string, start: number): number {
  const dot = value.indexOf('.', start);
  return dot === -1 ? value.length : dot;
}

function skipLeadingZeros(value: string, start: number, end: number): number {
  let i = start;
  while (i < end && value.charCodeAt(i) === ZERO) i++;
  return i;
}

function decimalPlaces(value: string): number {
  const dot = value.indexOf('.');
  return dot === -1 ? 0 : value.length - dot - 1;
}

/**
 * Exact sum, printed with as many decimal places as the most precise input (protocol.md "`book`
 * data": "a sum prints with as many decimal places as the most precise order in it"), so
 * "1.50" + "2" = "3.50" and "0.1" + "0.2" = "0.3". An empty list sums to "0".
 */
export function sumDecimals(values: readonly string[]): string {
  let places = 0;
  let longest = 0;
  let unsigned = true;
  for (const value of values) {
    places = Math.max(places, decimalPlaces(value));
    longest = Math.max(longest, value.length);
    if (value.charCodeAt(0) === MINUS) unsigned = false;
  }
  if (unsigned && longest <= COLUMN_SUM_MAX_LENGTH) return sumUnsigned(values, places);
  let total = new Big(0);
  for (const value of values) total = total.plus(value);
  return total.toFixed(places);
}

/** Longer inputs go to big.js: the column sum spreads its digits into one call's arguments. */
const COLUMN_SUM_MAX_LENGTH = 1000;

/**
 * Column addition of non-negative decimal strings (sizes are never negative): several times faster
 * than big.js on the aggregation hot path, where every multi-order level needs one sum.
 */
function sumUnsigned(values: readonly string[], places: number): string {
  const dots: number[] = [];
  let integerWidth = 1;
  for (const value of values) {
    const dot = integerEnd(value, 0);
    dots.push(dot);
    integerWidth = Math.max(integerWidth, dot);
  }
  // Column by column, least significant first: `places` fraction columns, then integer columns.
  // Char codes are collected most significant last and reversed once at the end.
  const codes: number[] = [];
  let carry = 0;
  for (let column = places - 1; column >= -integerWidth; column--) {
    // column >= 0: fraction digit `column` after the dot; column < 0: integer digit -column - 1 before it.
    let sum = carry;
    for (let k = 0; k < values.length; k++) {
      const value = values[k]!;
      const at = column >= 0 ? dots[k]! + 1 + column : dots[k]! + column;
      if (at >= 0 && at < value.length) sum += value.charCodeAt(at) - ZERO;
    }
    const digit = sum % 10;
    codes.push(ZERO + digit);
    carry = (sum - digit) / 10;
    if (column === 0) codes.push(DOT);
  }
  for (; carry > 0; carry = (carry - (carry % 10)) / 10) codes.push(ZERO + (carry % 10));
  // Drop leading zeros of the integer part, keeping its units digit.
  while (codes.length > places + (places > 0 ? 2 : 1) && codes[codes.length - 1] === ZERO) codes.pop();
  return String.fromCharCode(...codes.reverse());
}

/** True for any spelling of zero: "0", "0.000", "-0", "00.0". */
export function isZeroDecimal(value: string): boolean {
  let sawDigit = false;
  for (let i = value.charCodeAt(0) === MINUS ? 1 : 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === ZERO) sawDigit = true;
    else if (c !== DOT) return false;
  }
  return sawDigit;
}
