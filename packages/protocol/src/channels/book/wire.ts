/**
 * @module channels/book/wire
 * The `book` channel's wire form (docs/protocol.md "`book` data", "Compact encoding"): its data and
 * depths, its data in a compact frame (`[bids, asks]` or `[bids, asks, last_price]`, every price
 * without upstream's trailing zeros, exactly reversible: a price in any other text goes verbatim
 * behind a marker), and what the generic code asks of it (channels/definition.ts `ChannelWire`):
 * market ids, streams cut to a depth and grouped, a checksum on every message, that compact form.
 * How an update applies and the checksum are protocol/book.ts's until they move here.
 */
import { isObject } from '../../util/field-checks.ts';
import { type ChannelWire, type CompactForm, MARKET_IDS, type WireMessage } from '../definition.ts';

/** A price level on the wire: [price, size], both exact decimal strings. */
export type Level = [price: string, size: string];

export interface BookData {
  bids: Level[];
  asks: Level[];
  last_price?: string;
}

/**
 * Book depths: the best 1, 5, 10, 25 or 50 levels per side, or null for the full book (a request
 * may spell it `"full"`; messages keep null, as before there were names).
 */
export const bookDepths = [1, 5, 10, 25, 50] as const;
export type BookDepth = (typeof bookDepths)[number] | null;

/** A message's depth: absent is the full book; undefined for a depth that is not one. */
export function depthOf(message: { depth?: unknown }): BookDepth | undefined {
  if (message.depth === undefined || message.depth === null) return null;
  return bookDepths.find((depth) => depth === message.depth);
}

/** `[bids, asks]` or `[bids, asks, last_price]`, every price in the compact price form. */
export type CompactBookData =
  | [bids: Level[], asks: Level[]]
  | [bids: Level[], asks: Level[], lastPrice: string];

const PRICE_DECIMALS = 8;
/** Upstream's usual price text: digits, a dot, exactly eight decimals. */
const UPSTREAM_PRICE = /^\d+\.\d{8}$/;
/** A compact price without the verbatim marker: at most eight decimals, padded back on decoding. */
const SHORT_PRICE = /^\d+(?:\.\d{1,8})?$/;
const VERBATIM = '=';

/** `"0.78000000"` -> `"0.78"`, `"1.00000000"` -> `"1"`; any other text -> `"="` + the text. */
export function compactPrice(price: string): string {
  if (!UPSTREAM_PRICE.test(price)) return VERBATIM + price;
  return price.replace(/\.?0+$/, '');
}

/** The price text {@link compactPrice} was given, or undefined when `compact` is not in the form. */
export function expandPrice(compact: string): string | undefined {
  if (compact.startsWith(VERBATIM)) return compact.slice(VERBATIM.length);
  if (!SHORT_PRICE.test(compact)) return undefined;
  const dot = compact.indexOf('.');
  const integer = dot === -1 ? compact : compact.slice(0, dot);
  const fraction = dot === -1 ? '' : compact.slice(dot + 1);
  return `${integer}.${fraction.padEnd(PRICE_DECIMALS, '0')}`;
}

export const compactBook: CompactForm<BookData> = {
  encode(data: BookData): CompactBookData {
    const bids = data.bids.map(compactLevel);
    const asks = data.asks.map(compactLevel);
    return data.last_price === undefined ? [bids, asks] : [bids, asks, compactPrice(data.last_price)];
  },
  decode(value) {
    try {
      return { ok: true, data: decodeBook(value) };
    } catch (error) {
      if (error instanceof Malformed) return { ok: false, problem: error.message };
      throw error;
    }
  },
};

function compactLevel([price, size]: Level): Level {
  return [compactPrice(price), size];
}

class Malformed extends Error {}

function decodeBook(value: unknown): BookData {
  if (!Array.isArray(value) || value.length < 2 || value.length > 3)
    throw new Malformed('book data is not [bids, asks] or [bids, asks, last_price]');
  const data: BookData = { bids: decodeLevels(value[0], 'bids'), asks: decodeLevels(value[1], 'asks') };
  if (value.length === 3) data.last_price = decodePrice(value[2], 'last_price');
  return data;
}

function decodeLevels(value: unknown, side: string): Level[] {
  if (!Array.isArray(value)) throw new Malformed(`${side} is not an array`);
  return value.map((level: unknown): Level => {
    if (!Array.isArray(level) || level.length !== 2 || typeof level[1] !== 'string')
      throw new Malformed(`a level of ${side} is not [price, size]`);
    return [decodePrice(level[0], side), level[1]];
  });
}

function decodePrice(value: unknown, where: string): string {
  const price = typeof value === 'string' ? expandPrice(value) : undefined;
  if (price === undefined) throw new Malformed(`a price in ${where} is not in the compact price form`);
  return price;
}

export const bookWire: ChannelWire = {
  streamIds: { kind: MARKET_IDS },
  depths: true,
  checksummed: true,
  compact: compactBook,
  dataProblem({ data, checksum, depth }: WireMessage) {
    if (!isObject(data)) return 'data';
    const { bids, asks, last_price } = data;
    if (!isLevels(bids) || !isLevels(asks)) return 'levels';
    if (last_price !== undefined && typeof last_price !== 'string') return 'last_price';
    if (!Number.isSafeInteger(checksum)) return 'checksum';
    return depthOf({ depth }) === undefined ? 'depth' : undefined;
  },
};

function isLevels(value: unknown): value is Level[] {
  return (
    Array.isArray(value) &&
    value.every(
      (level) =>
        Array.isArray(level) &&
        level.length === 2 &&
        typeof level[0] === 'string' &&
        typeof level[1] === 'string',
    )
  );
}
