/**
 * @module relay/book-target
 * One market's order book as a poll target: one request serves every depth of the market, each
 * depth's stream gets the book limited to its depth. In cluster mode only the lease holder asks
 * upstream; the others apply what it shares through the same path.
 *
 * A book upstream answers with byte for byte as last time (most books, most polls) costs a
 * comparison: the upstream client resolves it to the book already validated (its ResponseMemo),
 * and the streams that hold that book are only confirmed, without aggregating or diffing again.
 */
import type { SharedResult } from '../cluster/shared-result.ts';
import type { BookState } from '../protocol/book.ts';
import type { BookDepth } from '../protocol/messages.ts';
import { ResponseMemo } from '../upstream/client.ts';
import { isMarketNotFound } from '../upstream/errors.ts';
import type { OrderBook } from '../upstream/schemas.ts';
import { aggregateBook, limitDepth } from './aggregate.ts';
import { withMilliseconds } from './channels.ts';
import type { TargetTiming } from './poll-scheduler.ts';
import { type PollContext, PollTarget } from './poll-target.ts';
import type { BookStream } from './stream.ts';

export function bookTargetKey(market: string): string {
  return `book:${market}`;
}

export class BookTarget extends PollTarget {
  readonly kind = 'book';
  readonly market: string;
  readonly #memo = new ResponseMemo<OrderBook>();
  /** The book last applied to the streams, and its aggregation to the depth it was needed. */
  #applied: { book: OrderBook; full: BookState; depth: BookDepth } | undefined;

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
      const book = await source.orderBook(this.market, { memo: this.#memo });
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
    const streams = this.context.registry.bookMarkets().get(this.market);
    if (streams === undefined) return;
    const ts = withMilliseconds(book.timestamp);
    const rts = new Date(receivedAt).toISOString();
    const depth = deepestOf(streams);
    // The same object as last applied is the same bytes from upstream, so the same state; its
    // aggregation is reused when it went as deep as the streams now ask.
    const applied = this.#applied;
    const same = applied?.book === book;
    const reuse = applied !== undefined && same && covers(applied.depth, depth) ? applied : undefined;
    const full = reuse?.full ?? aggregateBook(book, depth);
    this.#applied = { book, full, depth: reuse?.depth ?? depth };
    const { publisher } = this.context;
    let changed = false;
    let first = false;
    for (const stream of streams) {
      first ||= !stream.hasState;
      if (same && stream.hasState) publisher.confirm(stream, ts, rts, receivedAt);
      else if (publisher.publish(stream, limitDepth(full, stream.depth ?? null), ts, rts, receivedAt))
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

/** The deepest of the streams' depths (null: the full book). */
function deepestOf(streams: Iterable<BookStream>): BookDepth {
  let deepest = 0;
  for (const stream of streams) {
    if (stream.depth === null || stream.depth === undefined) return null;
    deepest = Math.max(deepest, stream.depth);
  }
  return deepest as BookDepth;
}

/** Whether an aggregation to `built` levels holds the `needed` ones. */
function covers(built: BookDepth, needed: BookDepth): boolean {
  return built === null || (needed !== null && needed <= built);
}
