/**
 * @module relay/channels/book/checked-decimals
 * A book's prices and sizes in the forms upstream's schema checks (schemas.ts `price8`:
 * `-?\d+\.\d{8}`; `sizeString`: `\d+(\.\d+)?`), compared and summed exactly where the slice reads
 * them: prices as texts or as spans of the body they arrived in, sizes as texts. Every price of a
 * book state has that form (a grouped book's prices print with 8 places too; a state another relay
 * stored is held to it on arrival, ./relay-form.ts), so the slice's aggregation and diff need
 * nothing else. The wire package's `decimal.ts` is the general arithmetic on any decimal text that
 * a client applies updates with; these are the narrower forms the relay reads, whose fixed eight
 * places make a comparison mostly a text comparison and a sum an integer addition (the property
 * tests hold both to the wire package's results).
 */

const MINUS = 0x2d;
const DOT = 0x2e;
const ZERO = 0x30;
/** A price has exactly this many decimal places (schemas.ts `price8`). */
export const PRICE_PLACES = 8;

/**
 * Numeric comparison of two prices of the checked form: negative, zero or positive as a < b,
 * a == b, a > b; "-0.00000000" equals "0.00000000" and leading zeros do not count.
 */
export function comparePriceTexts(a: string, b: string): number {
  if (a === b) return 0;
  const aNegative = a.charCodeAt(0) === MINUS;
  const bNegative = b.charCodeAt(0) === MINUS;
  if (aNegative !== bNegative) {
    if (isZeroText(a) && isZeroText(b)) return 0;
    return aNegative ? -1 : 1;
  }
  // Same sign: with eight places each, the magnitude with more significant digits is larger, and
  // of as many, text order is numeric order.
  const aDigits = significantDigits(a, aNegative);
  const bDigits = significantDigits(b, bNegative);
  const magnitude = aDigits.length - bDigits.length || textOrder(aDigits, bDigits);
  return aNegative ? -magnitude : magnitude;
}

function textOrder(a: string, b: string): number {
  if (a === b) return 0;
  return a < b ? -1 : 1;
}

/** A price's text from its first significant integer digit (the units digit at the latest), unsigned. */
function significantDigits(price: string, negative: boolean): string {
  const units = price.length - PRICE_PLACES - 2;
  let i = negative ? 1 : 0;
  while (i < units && price.charCodeAt(i) === ZERO) i++;
  return i === 0 ? price : price.slice(i);
}

/**
 * The same comparison of two prices of the checked form held as the spans [a, aEnd) and [b, bEnd)
 * of `body`, without making them strings: a book's orders are compared where they sit.
 */
export function comparePriceSpans(body: Buffer, a: number, aEnd: number, b: number, bEnd: number): number {
  const aNegative = body[a] === MINUS;
  const bNegative = body[b] === MINUS;
  const aStart = aNegative ? a + 1 : a;
  const bStart = bNegative ? b + 1 : b;
  if (aNegative !== bNegative) {
    if (isZeroSpan(body, aStart, aEnd) && isZeroSpan(body, bStart, bEnd)) return 0;
    return aNegative ? -1 : 1;
  }
  const magnitude = compareMagnitudeSpans(body, aStart, aEnd, bStart, bEnd);
  return aNegative ? -magnitude : magnitude;
}

/** Unsigned prices: the longer integer part (leading zeros skipped) is larger, then digit by digit. */
function compareMagnitudeSpans(
  body: Buffer,
  aStart: number,
  aEnd: number,
  bStart: number,
  bEnd: number,
): number {
  const aDot = aEnd - PRICE_PLACES - 1;
  const bDot = bEnd - PRICE_PLACES - 1;
  let ai = aStart;
  let bi = bStart;
  while (ai < aDot && body[ai] === ZERO) ai++;
  while (bi < bDot && body[bi] === ZERO) bi++;
  const lengthDifference = aDot - ai - (bDot - bi);
  if (lengthDifference !== 0) return lengthDifference;
  for (; ai < aEnd; ai++, bi++) {
    const d = body[ai]! - body[bi]!;
    if (d !== 0) return d;
  }
  return 0;
}

function isZeroSpan(body: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (body[i] !== ZERO && body[i] !== DOT) return false;
  return true;
}

/** True for any spelling of zero of a checked price or size: "0", "0.00", "-0.00000000", "00.0". */
export function isZeroText(value: string): boolean {
  for (let i = value.charCodeAt(0) === MINUS ? 1 : 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c !== ZERO && c !== DOT) return false;
  }
  return true;
}

/**
 * Exact sum of sizes of the checked form, printed with as many decimal places as the most precise
 * of them (protocol.md "`book` data"): "1.50" + "2" = "3.50", "0.1" + "0.2" = "0.3". The sum is
 * taken in integer units of those places: as a Number while every size has at most
 * SAFE_UNIT_DIGITS digits in those units (so that even MAX_SAFE_SUMMANDS of them stay exact under
 * 2^53), as a BigInt past that.
 */
export function sumSizes(sizes: readonly string[]): string {
  let places = 0;
  let integerDigits = 0;
  for (const size of sizes) {
    const dot = size.indexOf('.');
    if (dot === -1) integerDigits = Math.max(integerDigits, size.length);
    else {
      places = Math.max(places, size.length - dot - 1);
      integerDigits = Math.max(integerDigits, dot);
    }
  }
  const safe = integerDigits + places <= SAFE_UNIT_DIGITS && sizes.length <= MAX_SAFE_SUMMANDS;
  const digits = (safe ? numberSum(sizes, places) : bigIntSum(sizes, places)).padStart(places + 1, '0');
  return places === 0 ? digits : `${digits.slice(0, -places)}.${digits.slice(-places)}`;
}

/** Sizes of at most this many digits in units of the sum's places are below 10^14 ... */
const SAFE_UNIT_DIGITS = 14;
/** ... so that this many of them sum below Number.MAX_SAFE_INTEGER (about 9.007 * 10^15). */
const MAX_SAFE_SUMMANDS = 90;

/** The sizes' sum in units of `places` decimal places, printed. */
function numberSum(sizes: readonly string[], places: number): string {
  let units = 0;
  for (const size of sizes) units += unitsOf(size, places);
  return String(units);
}

function bigIntSum(sizes: readonly string[], places: number): string {
  let units = 0n;
  for (const size of sizes) units += bigUnitsOf(size, places);
  return String(units);
}

/** A size in units of `places` decimal places (at least its own), digit by digit. */
function unitsOf(size: string, places: number): number {
  let units = 0;
  let fractionDigits = -1;
  for (let i = 0; i < size.length; i++) {
    const c = size.charCodeAt(i);
    if (c === DOT) fractionDigits = 0;
    else {
      units = units * 10 + (c - ZERO);
      if (fractionDigits >= 0) fractionDigits++;
    }
  }
  return units * 10 ** (places - Math.max(fractionDigits, 0));
}

/** The same as a BigInt, for sizes too long for a Number to hold exactly. */
function bigUnitsOf(size: string, places: number): bigint {
  const dot = size.indexOf('.');
  if (dot === -1) return BigInt(size + '0'.repeat(places));
  return BigInt(size.slice(0, dot) + size.slice(dot + 1).padEnd(places, '0'));
}
