/**
 * @module relay/book-target
 * One market's order book as a poll target: one request serves every depth of the market, each
 * depth's stream gets the book limited to its depth. In cluster mode only the lease holder asks
 * upstream; the others apply what it shares through the same path.
 */
import type { SharedResult } from '../cluster/shared-result.ts';
import { isMarketNotFound } from '../upstream/errors.ts';
import type { OrderBook } from '../upstream/schemas.ts';
import { aggregateBook, limitDepth } from './aggregate.ts';
import { withMilliseconds } from './channels.ts';
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
      const expectedIntervalMs = Math.min(
        this.timing.maxAgeMs,
        this.meanAskGapMs ?? this.timing.minIntervalMs,
      );
      if (!(await cluster.claim(this.key, expectedIntervalMs)) || this.removed) return;
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
        this.context.closeMarket('book', this.market);
        return;
      }
      this.failed('book', 1, askedAt, error);
    }
  }

  #apply(book: OrderBook, askedAt: number, receivedAt: number): void {
    if (!this.accepts(askedAt)) return;
    const streams = this.context.registry.streamsOf('book', this.market);
    if (streams.size === 0) return;
    const ts = withMilliseconds(book.timestamp);
    const rts = new Date(receivedAt).toISOString();
    const full = aggregateBook(book);
    let changed = false;
    let first = false;
    for (const stream of streams) {
      first ||= !stream.hasState;
      if (this.context.publisher.publish(stream, limitDepth(full, stream.depth ?? null), ts, rts, receivedAt))
        changed = true;
    }
    this.confirmed(askedAt, first ? undefined : changed);
  }

  /** The lease holder's result, ordered by when it received it (its polls never overlap). */
  #onShared(result: SharedResult): void {
    if (result.kind === 'not_found') this.context.closeMarket('book', this.market);
    else if (result.kind === 'book' && result.book.market_id.toLowerCase() === this.market)
      this.#apply(result.book, result.receivedAt, result.receivedAt);
  }
}
