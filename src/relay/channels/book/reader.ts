/**
 * @module relay/channels/book/reader
 * An order book body read straight from its bytes, for the poll hot path: one pass that checks
 * everything the `orderBook` schema checks and keeps, per order, only where its price and size sit
 * in the body. `JSON.parse` of a polled book builds over 500 objects and strings (internalising the
 * short ones into V8's old generation), all of them garbage once the book is aggregated; here an
 * order costs four integers, and only the levels a stream shows ever become strings.
 *
 * The reader handles the shape upstream sends, not all of JSON: a body with anything else (a string
 * escape, a number with a fraction or exponent, a key the schema does not name, a key twice, a
 * field missing or of another type) gets `undefined`, and goes the general way (`JSON.parse`, the
 * compiled check, zod to say what is wrong). So it never accepts what the schema refuses, and what
 * it accepts reads as `JSON.parse` + the schema would (test/relay/channels/book/reader.property.test.ts).
 * An order written as upstream writes it (its keys in upstream's order, no whitespace) is matched
 * against that layout byte for byte; any other order goes through the general object reader.
 */
import type { z } from 'zod';
import { compiledCheck } from '../../../upstream/compiled-check.ts';
import * as schemas from '../../../upstream/schemas.ts';
import { PRICE_PLACES } from './checked-decimals.ts';
import { OrderSpans } from './levels.ts';

/** An order book as the schema would validate it, with its orders as spans of the body. */
export interface ReadOrderBook {
  market_id: string;
  last_price: string;
  timestamp: string;
  bids: OrderSpans;
  asks: OrderSpans;
}

/** What the readers below return instead of a position when the body is not one they handle. */
const NOT_READ = -1;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const MINUS = 0x2d;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;

type BookKey = keyof schemas.OrderBook | keyof schemas.OrderEntry;
const bytesOf = (text: string): Buffer => Buffer.from(text, 'latin1');
const keyOf = (key: BookKey): Buffer => bytesOf(key);
/** The digits of Number.MAX_SAFE_INTEGER: an integer of as many digits is compared with them. */
const MAX_SAFE_DIGITS = bytesOf(String(Number.MAX_SAFE_INTEGER));

/** The keys the schema names, as bytes: a key is matched in the body without making a string. */
const Key = {
  marketId: keyOf('market_id'),
  lastPrice: keyOf('last_price'),
  timestamp: keyOf('timestamp'),
  bids: keyOf('bids'),
  asks: keyOf('asks'),
  id: keyOf('id'),
  price: keyOf('price'),
  size: keyOf('size'),
  tokenId: keyOf('token_id'),
};

/** An order as upstream writes it, between its values: `{"id":"…","price":"…","size":"…","token_id":…}`. */
const AsSent = {
  opening: bytesOf('{"id":"'),
  price: bytesOf('","price":"'),
  size: bytesOf('","size":"'),
  tokenId: bytesOf('","token_id":'),
};

const isUuid = stringCheck(schemas.uuid);
const isPrice = stringCheck(schemas.price8);
const isTimestamp = stringCheck(schemas.isoTimestamp);

function stringCheck(schema: z.ZodType<string>): (value: string) => boolean {
  const check = compiledCheck(schema);
  return check ?? ((value) => schema.safeParse(value).success);
}

/**
 * The order book in `body`, or undefined when the body is not one the reader handles (which
 * includes every body the schema refuses).
 */
export function readOrderBook(body: Buffer): ReadOrderBook | undefined {
  let marketId: string | undefined;
  let lastPrice: string | undefined;
  let timestamp: string | undefined;
  let bids: number[] | undefined;
  let asks: number[] | undefined;
  const end = readObject(body, skipSpace(body, 0), (keyStart, keyEnd, at) => {
    if (isKey(body, keyStart, keyEnd, Key.bids) && bids === undefined) {
      bids = [];
      return readOrders(body, at, bids);
    }
    if (isKey(body, keyStart, keyEnd, Key.asks) && asks === undefined) {
      asks = [];
      return readOrders(body, at, asks);
    }
    if (body[at] !== QUOTE) return NOT_READ;
    const valueEnd = stringEnd(body, at + 1);
    if (valueEnd === NOT_READ) return NOT_READ;
    const value = body.toString('utf8', at + 1, valueEnd);
    if (isKey(body, keyStart, keyEnd, Key.marketId) && marketId === undefined && isUuid(value))
      marketId = value;
    else if (isKey(body, keyStart, keyEnd, Key.lastPrice) && lastPrice === undefined && isPrice(value))
      lastPrice = value;
    else if (isKey(body, keyStart, keyEnd, Key.timestamp) && timestamp === undefined && isTimestamp(value))
      timestamp = value;
    else return NOT_READ;
    return valueEnd + 1;
  });
  if (end === NOT_READ || skipSpace(body, end) !== body.length) return undefined;
  if (marketId === undefined || lastPrice === undefined || timestamp === undefined) return undefined;
  if (bids === undefined || asks === undefined) return undefined;
  return {
    market_id: marketId,
    last_price: lastPrice,
    timestamp,
    bids: new OrderSpans(body, bids),
    asks: new OrderSpans(body, asks),
  };
}

/**
 * `{` members `}` at `at`: `member` gets each key's text span and where its value starts, and
 * returns where the value ends (or NOT_READ). Returns where the object ends.
 */
function readObject(
  body: Buffer,
  at: number,
  member: (keyStart: number, keyEnd: number, valueAt: number) => number,
): number {
  return readList(body, at, OPEN_BRACE, CLOSE_BRACE, (keyAt) => {
    if (body[keyAt] !== QUOTE) return NOT_READ;
    const keyEnd = stringEnd(body, keyAt + 1);
    if (keyEnd === NOT_READ) return NOT_READ;
    const colon = skipSpace(body, keyEnd + 1);
    if (body[colon] !== COLON) return NOT_READ;
    return member(keyAt + 1, keyEnd, skipSpace(body, colon + 1));
  });
}

/** `[` orders `]` at `at`, their spans pushed to `offsets`: returns where the array ends. */
function readOrders(body: Buffer, at: number, offsets: number[]): number {
  return readList(body, at, OPEN_BRACKET, CLOSE_BRACKET, (orderAt) => {
    const end = readOrderAsSent(body, orderAt, offsets);
    return end === NOT_READ ? readAnyOrder(body, orderAt, offsets) : end;
  });
}

/**
 * `open`, items separated by commas, `close`, at `at` (an object's members, an array's elements):
 * `item` reads one from where it starts and returns where it ends (or NOT_READ). Returns where the
 * list ends.
 */
function readList(
  body: Buffer,
  at: number,
  open: number,
  close: number,
  item: (at: number) => number,
): number {
  if (body[at] !== open) return NOT_READ;
  let i = skipSpace(body, at + 1);
  if (body[i] === close) return i + 1;
  for (;;) {
    const end = item(i);
    if (end === NOT_READ) return NOT_READ;
    i = skipSpace(body, end);
    if (body[i] === close) return i + 1;
    if (body[i] !== COMMA) return NOT_READ;
    i = skipSpace(body, i + 1);
  }
}

/** An order laid out exactly as upstream writes it (AsSent), else NOT_READ with nothing pushed. */
function readOrderAsSent(body: Buffer, at: number, offsets: number[]): number {
  if (!matches(body, at, AsSent.opening)) return NOT_READ;
  const idEnd = stringEnd(body, at + AsSent.opening.length);
  if (idEnd === NOT_READ || !matches(body, idEnd, AsSent.price)) return NOT_READ;
  const priceStart = idEnd + AsSent.price.length;
  const priceEnd = priceTextEnd(body, priceStart);
  if (priceEnd === NOT_READ || !matches(body, priceEnd, AsSent.size)) return NOT_READ;
  const sizeStart = priceEnd + AsSent.size.length;
  const sizeEnd = sizeTextEnd(body, sizeStart);
  if (sizeEnd === NOT_READ || !matches(body, sizeEnd, AsSent.tokenId)) return NOT_READ;
  const tokenEnd = integerEnd(body, sizeEnd + AsSent.tokenId.length);
  if (tokenEnd === NOT_READ || body[tokenEnd] !== CLOSE_BRACE) return NOT_READ;
  offsets.push(priceStart, priceEnd, sizeStart, sizeEnd);
  return tokenEnd + 1;
}

/** An order with its four keys in any order and any whitespace, each key once. */
function readAnyOrder(body: Buffer, at: number, offsets: number[]): number {
  let id = false;
  let tokenId = false;
  let priceStart = NOT_READ;
  let priceEnd = NOT_READ;
  let sizeStart = NOT_READ;
  let sizeEnd = NOT_READ;
  const end = readObject(body, at, (keyStart, keyEnd, valueAt) => {
    if (isKey(body, keyStart, keyEnd, Key.tokenId) && !tokenId) {
      tokenId = true;
      return integerEnd(body, valueAt);
    }
    if (body[valueAt] !== QUOTE) return NOT_READ;
    const start = valueAt + 1;
    if (isKey(body, keyStart, keyEnd, Key.id) && !id) {
      id = true;
      const idEnd = stringEnd(body, start);
      return idEnd === NOT_READ ? NOT_READ : idEnd + 1;
    }
    if (isKey(body, keyStart, keyEnd, Key.price) && priceStart === NOT_READ) {
      priceStart = start;
      priceEnd = priceTextEnd(body, start);
      return priceEnd === NOT_READ ? NOT_READ : priceEnd + 1;
    }
    if (isKey(body, keyStart, keyEnd, Key.size) && sizeStart === NOT_READ) {
      sizeStart = start;
      sizeEnd = sizeTextEnd(body, start);
      return sizeEnd === NOT_READ ? NOT_READ : sizeEnd + 1;
    }
    return NOT_READ;
  });
  if (end === NOT_READ || !id || !tokenId || priceStart === NOT_READ || sizeStart === NOT_READ)
    return NOT_READ;
  offsets.push(priceStart, priceEnd, sizeStart, sizeEnd);
  return end;
}

/**
 * Where the string whose text starts at `start` closes (its quote). Control characters are not
 * JSON; escapes are left to the general way. UTF-8 continuation bytes never look like either.
 */
function stringEnd(body: Buffer, start: number): number {
  for (let i = start; i < body.length; i++) {
    const c = body[i]!;
    if (c === QUOTE) return i;
    if (c === BACKSLASH || c < 0x20) return NOT_READ;
  }
  return NOT_READ;
}

/** `-?\d+\.\d{8}` then the closing quote: where the quote is. */
function priceTextEnd(body: Buffer, start: number): number {
  let i = body[start] === MINUS ? start + 1 : start;
  const integerStart = i;
  while (isDigit(body[i])) i++;
  if (i === integerStart || body[i] !== DOT) return NOT_READ;
  const fractionEnd = i + 1 + PRICE_PLACES;
  for (i++; i < fractionEnd; i++) if (!isDigit(body[i])) return NOT_READ;
  return body[i] === QUOTE ? i : NOT_READ;
}

/** `\d+(\.\d+)?` then the closing quote: where the quote is. */
function sizeTextEnd(body: Buffer, start: number): number {
  let i = start;
  while (isDigit(body[i])) i++;
  if (i === start) return NOT_READ;
  if (body[i] === DOT) {
    const fractionStart = ++i;
    while (isDigit(body[i])) i++;
    if (i === fractionStart) return NOT_READ;
  }
  return body[i] === QUOTE ? i : NOT_READ;
}

/**
 * A JSON integer (`-?(0|[1-9]\d*)`) that is a safe integer, as the schema asks: where it ends.
 * Fractions and exponents go the general way.
 */
function integerEnd(body: Buffer, start: number): number {
  const digitsStart = body[start] === MINUS ? start + 1 : start;
  let i = digitsStart;
  while (isDigit(body[i])) i++;
  const digits = i - digitsStart;
  if (digits === 0 || (digits > 1 && body[digitsStart] === ZERO) || !isSafeMagnitude(body, digitsStart, i))
    return NOT_READ;
  const next = body[i];
  return next === DOT || next === 0x65 || next === 0x45 ? NOT_READ : i; // '.', 'e', 'E'
}

/** Whether the digits [start, end), without leading zeros, are at most Number.MAX_SAFE_INTEGER. */
function isSafeMagnitude(body: Buffer, start: number, end: number): boolean {
  const digits = end - start;
  if (digits !== MAX_SAFE_DIGITS.length) return digits < MAX_SAFE_DIGITS.length;
  return body.compare(MAX_SAFE_DIGITS, 0, digits, start, end) <= 0;
}

/** Whether the key whose text is [start, end) is `key`. */
function isKey(body: Buffer, start: number, end: number, key: Buffer): boolean {
  return end - start === key.length && matches(body, start, key);
}

/** Whether `bytes` sit in the body at `at`. */
function matches(body: Buffer, at: number, bytes: Buffer): boolean {
  if (at + bytes.length > body.length) return false;
  for (let k = 0; k < bytes.length; k++) if (body[at + k] !== bytes[k]) return false;
  return true;
}

/** Past any JSON whitespace from `at`. */
function skipSpace(body: Buffer, at: number): number {
  let i = at;
  for (;;) {
    const c = body[i];
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return i;
    i++;
  }
}

function isDigit(c: number | undefined): boolean {
  return c !== undefined && c >= ZERO && c <= NINE;
}
