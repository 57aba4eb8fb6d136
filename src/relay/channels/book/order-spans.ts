/**
 * @module relay/channels/book/order-spans
 * One side of an order book as spans of the body it came in (./reader.ts): prices
 * compared where they sit, and made into strings only for the orders asked for.
 */

const MINUS = 0x2d;
const DOT = 0x2e;
const ZERO = 0x30;
/** A price has exactly this many decimal places (schemas.ts `price8`). */
export const PRICE_PLACES = 8;

/**
 * One side's orders in body order, each a price and a size as [start, end) byte spans of the body:
 * compared and turned into strings only when asked (./levels.ts reads them).
 */
export class OrderSpans {
  readonly #body: Buffer;
  /** Per order four offsets: price start, price end, size start, size end. */
  readonly #offsets: readonly number[];

  constructor(body: Buffer, offsets: readonly number[]) {
    this.#body = body;
    this.#offsets = offsets;
  }

  get length(): number {
    return this.#offsets.length >> 2;
  }

  price(order: number): string {
    const at = order << 2;
    return this.#body.toString('latin1', this.#offsets[at]!, this.#offsets[at + 1]!);
  }

  size(order: number): string {
    const at = order << 2;
    return this.#body.toString('latin1', this.#offsets[at + 2]!, this.#offsets[at + 3]!);
  }

  /** Numeric comparison of two orders' prices, as `compareDecimals` of their texts would give. */
  compare(a: number, b: number): number {
    const offsets = this.#offsets;
    const at = a << 2;
    const bt = b << 2;
    return comparePrices(this.#body, offsets[at]!, offsets[at + 1]!, offsets[bt]!, offsets[bt + 1]!);
  }
}

/**
 * Compares two prices of the checked form `-?\d+\.\d{8}`, the spans [a, aEnd) and [b, bEnd) of
 * `body`: numerically, so "-0.00000000" equals "0.00000000" and leading zeros do not count.
 */
function comparePrices(body: Buffer, a: number, aEnd: number, b: number, bEnd: number): number {
  const aNegative = body[a] === MINUS;
  const bNegative = body[b] === MINUS;
  const aStart = aNegative ? a + 1 : a;
  const bStart = bNegative ? b + 1 : b;
  if (aNegative !== bNegative) {
    if (isZeroPrice(body, aStart, aEnd) && isZeroPrice(body, bStart, bEnd)) return 0;
    return aNegative ? -1 : 1;
  }
  const magnitude = compareMagnitudes(body, aStart, aEnd, bStart, bEnd);
  return aNegative ? -magnitude : magnitude;
}

/** Unsigned prices: the longer integer part (leading zeros skipped) is larger, then digit by digit. */
function compareMagnitudes(body: Buffer, aStart: number, aEnd: number, bStart: number, bEnd: number): number {
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

function isZeroPrice(body: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (body[i] !== ZERO && body[i] !== DOT) return false;
  return true;
}
