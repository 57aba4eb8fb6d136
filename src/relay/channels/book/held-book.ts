/**
 * @module relay/channels/book/held-book
 * What a market's book target holds of the book it last applied, so that a poll bringing the same
 * book costs a comparison and a new one is aggregated once per depth asked: the upstream client's
 * memo of the response (byte for byte the same body resolves to the same book), the book last
 * applied and its levels once made, and the levels the body reader (./reader.ts) made of the body
 * just read. Once applied, the memo keeps a stand-in with empty sides instead of the parsed book,
 * so its entries die young; the whole book is parsed again from the body only when asked.
 */
import type { BookState } from '../../../../packages/protocol/src/protocol/book.ts';
import type { BookDepth } from '../../../../packages/protocol/src/protocol/messages.ts';
import { ResponseMemo } from '../../../upstream/client.ts';
import type { OrderBook } from '../../../upstream/schemas.ts';
import { aggregateBook, aggregateSides } from './levels.ts';
import { readOrderBook } from './reader.ts';

export class HeldBook {
  /** The upstream client's memo of the last response (what a poll asks with). */
  readonly memo = new ResponseMemo<OrderBook>();
  /**
   * The book last applied to the target's streams (or, `standIn`, what the memo keeps in its
   * place), and its aggregation once made (to `depth`).
   */
  #last: AppliedBook | undefined;
  /** The stand-in the body reader last answered with, and the levels it read (see `read`). */
  #lastRead: AppliedBook | undefined;

  /**
   * A body read straight to its levels to `depth`, with a stand-in with empty sides for the memo
   * to keep: the entries never become objects. Undefined (read the general way) when the body is
   * not one the reader handles.
   */
  read(body: Buffer, depth: BookDepth): OrderBook | undefined {
    const read = readOrderBook(body);
    if (read === undefined) return undefined;
    const book = standInOf(read);
    this.#lastRead = { book, standIn: true, aggregated: { full: aggregateSides(read, depth), depth } };
    return book;
  }

  /**
   * Takes `book` as the one applied. True when it is the same object as last applied: the same
   * bytes from upstream, so the same state.
   */
  apply(book: OrderBook): boolean {
    const same = this.#last?.book === book;
    if (!same) this.#last = this.#lastRead?.book === book ? this.#lastRead : { book };
    return same;
  }

  /** The book's aggregation to `depth` levels, made once per book applied (and deeper when asked). */
  aggregated(book: OrderBook, depth: BookDepth): BookState {
    const last = this.#last?.book === book ? this.#last : undefined;
    const made = last?.aggregated;
    if (made !== undefined && covers(made.depth, depth)) return made.full;
    const full = aggregateBook(this.whole(book), depth);
    if (last !== undefined) last.aggregated = { full, depth };
    return full;
  }

  /**
   * Once a new book is applied, all an unchanged poll needs of it is its aggregation and its time:
   * the memo keeps a stand-in with empty sides, so the entries die young instead of living until the
   * next poll, where every major collection would mark them again.
   */
  keepLess(book: OrderBook): void {
    const last = this.#last;
    if (last?.book !== book || last.standIn === true) return;
    const standIn = standInOf(book);
    this.memo.keep(book, standIn);
    this.#last = { ...last, book: standIn, standIn: true };
  }

  /** The book whole: a stand-in's from the body it came from, parsed again. */
  whole(book: OrderBook): OrderBook {
    if (this.#last?.book !== book || this.#last.standIn !== true) return book;
    return this.memo.reparse() ?? book;
  }
}

interface AppliedBook {
  book: OrderBook;
  standIn?: boolean;
  aggregated?: { full: BookState; depth: BookDepth };
}

/** A book's fields with empty sides: what the memo keeps once the levels are made. */
function standInOf(book: Pick<OrderBook, 'market_id' | 'last_price' | 'timestamp'>): OrderBook {
  return {
    market_id: book.market_id,
    bids: [],
    asks: [],
    last_price: book.last_price,
    timestamp: book.timestamp,
  };
}

/** Whether an aggregation to `built` levels holds the `needed` ones. */
function covers(built: BookDepth, needed: BookDepth): boolean {
  return built === null || (needed !== null && needed <= built);
}
