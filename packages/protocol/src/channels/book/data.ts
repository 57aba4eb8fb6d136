/**
 * @module channels/book/data
 * What a `book` stream carries (docs/protocol.md "`book` data"): levels of exact decimal strings,
 * best first, and the depths a stream is cut to.
 */

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
