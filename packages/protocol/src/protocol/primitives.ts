/**
 * @module protocol/primitives
 * The small types every part of the wire names: a request's id and a book's depth (the book
 * channel's, channels/book/wire.ts). Apart so that
 * the messages (./messages.ts) and the history wire (./history.ts) both take them without importing
 * each other.
 */

export type RequestId = string | number;

export { type BookDepth, bookDepths } from '../channels/book/data.ts';
