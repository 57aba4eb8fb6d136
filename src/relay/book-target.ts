/**
 * @module relay/book-target
 * One market's order book as a poll target: one request serves every depth of the market's `book`
 * streams, each getting the book limited to its depth, and its `orders` stream, which gets the
 * book's orders one by one (polled for `orders` alone too). In cluster mode only the lease holder
 * asks upstream; the others apply what it shares through the same path.
 */
import type { SharedResult } from '../cluster/shared-result.ts';
import { isMarketNotFound } from '../upstream/errors.ts';
import type { OrderBook } from '../upstream/schemas.ts';
import { aggregateBook, limitDepth } from './aggregate.ts';
import { withMilliseconds } from './channels.ts';
import { ordersStateOf } from './orders.ts';
import type { TargetTiming } from './poll-scheduler.ts';
import { type PollContext, PollTarget } from './poll-target.ts';

export function bookTargetKey(market: string): string {
  return `book:${market}`;
}

export class BookTarget extends PollTarget {
  readonly kind = 'book';
  readonly market: string;

  constructor(market: string, timing: TargetTiming, context: PollContext) {
    super(bookTargetKey(market), timing, context);
    this.market = market;
    context.cluster.follow(this.key, (result) => this.#onShared(result));
  }

  async poll(): Promise<void> {
    const { cluster, source, now } = this.context;
    const askedAt = this.beginAsk();
    try {
      if (!(await this.holdsLease())) return;
      const book = await source.orderBook(this.market);
      if (this.removed) return;
      const receivedAt = now();
      this.#apply(book, askedAt, receivedAt);
      cluster.share(this.key, () => ({ kind: 'book', receivedAt, book }));
      this.emitPoll('book', 1, 'ok', askedAt);
    } catch (error) {
      if (this.removed) return;
      if (isMarketNotFound(error) && this.context.upstreamVerified()) {
        this.emitPoll('book', 1, 'not_found', askedAt, error);
        cluster.share(this.key, () => ({ kind: 'not_found' }));
        this.#closeMarket();
        return;
      }
      this.failed('book', 1, askedAt, error);
    }
  }

  #apply(book: OrderBook, askedAt: number, receivedAt: number): void {
    if (!this.accepts(askedAt)) return;
    const { registry, publisher } = this.context;
    const books = registry.streamsOf('book', this.market);
    const orders = registry.streamsOf('orders', this.market);
    if (books.size === 0 && orders.size === 0) return;
    const ts = withMilliseconds(book.timestamp);
    const rts = new Date(receivedAt).toISOString();
    let changed = false;
    let first = false;
    if (books.size > 0) {
      const full = aggregateBook(book);
      for (const stream of books) {
        first ||= !stream.hasState;
        if (publisher.publish(stream, limitDepth(full, stream.depth ?? null), ts, rts, receivedAt))
          changed = true;
      }
    }
    if (orders.size > 0) {
      const state = ordersStateOf(book);
      for (const stream of orders) {
        first ||= !stream.hasState;
        if (publisher.publish(stream, state, ts, rts, receivedAt)) changed = true;
      }
    }
    this.confirmed(askedAt, first ? undefined : changed);
  }

  /** Upstream has no such market: its `book` and `orders` streams end. */
  #closeMarket(): void {
    this.context.closeMarket('book', this.market);
    this.context.closeMarket('orders', this.market);
  }

  /** The lease holder's result, ordered by when it received it (its polls never overlap). */
  #onShared(result: SharedResult): void {
    if (result.kind === 'not_found') this.#closeMarket();
    else if (result.kind === 'book' && result.book.market_id.toLowerCase() === this.market)
      this.#apply(result.book, result.receivedAt, result.receivedAt);
  }
}
