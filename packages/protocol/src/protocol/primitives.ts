/**
 * @module protocol/primitives
 * The small types every part of the wire names: a request's id and a book's depth. Apart so that
 * the messages (./messages.ts) and the history wire (./history.ts) both take them without importing
 * each other.
 */

export type RequestId = string | number;

/**
 * Book depths (protocol.md "`book` data"): the best 1, 5, 10, 25 or 50 levels per side, or null for
 * the full book (a request may spell it `"full"`; messages keep null, as before there were names).
 */
export const bookDepths = [1, 5, 10, 25, 50] as const;
export type BookDepth = (typeof bookDepths)[number] | null;
