/**
 * @module relay/book-target
 * One market's order book as a poll target: one request serves every depth of the market's `book`
 * streams, each getting the book limited to its depth, and its `orders` stream, which gets the
 * book's orders one by one (polled for `orders` alone too). In cluster mode only the lease holder
 * asks upstream: it numbers every depth's `book` stream for the cluster (relay/cluster-stream.ts),
 * which the others serve as they are, and shares the response for their `orders` streams.
 */
import type { SharedResult } from '../cluster/shared-result.ts';
import type { BookState } from '../protocol/book.ts';
import type { BookData } from '../protocol/messages.ts';
import { isMarketNotFound } from '../upstream/errors.ts';
import type { OrderBook } from '../upstream/schemas.ts';
import { aggregateBook, limitDepth } from './aggregate.ts';
import { withMilliseconds } from './channels.ts';
import { bookClusterCodec } from './cluster-codecs.ts';
import type { AppliedPoll, ClusterTarget } from './cluster-stream.ts';
import { ordersStateOf } from './orders.ts';
import type { TargetTiming } from './poll-scheduler.ts';
import { type PollContext, PollTarget } from './poll-target.ts';

export function bookTargetKey(market: string): string {
  return `book:${market}`;
}

export class BookTarget extends PollTarget {
  readonly kind = 'book';
  readonly market: string;
  /** Cluster mode: the market's `book` streams as the cluster numbers them. */
  readonly #cluster: ClusterTarget<BookState, BookData> | undefined;

  constructor(market: string, timing: TargetTiming, context: PollContext) {
    super(bookTargetKey(market), timing, context);
    this.market = market;
    this.#cluster = context.cluster.streams(
      this.key,
      market,
      bookClusterCodec,
      {
        registry: context.registry,
        publisher: context.publisher,
        now: context.now,
        closeMarket: () => this.#closeMarket(),
      },
      (applied) => this.#applied(applied.receivedAt, applied),
    );
    context.cluster.follow(this.key, (result) => this.#onShared(result));
  }

  async poll(): Promise<void> {
    const { cluster, source, now } = this.context;
    const askedAt = this.beginAsk();
    try {
      this.followed = !(await this.holdsLease());
      if (this.followed) return;
      const book = await source.orderBook(this.market);
      if (this.removed) return;
      const receivedAt = now();
      if (this.#cluster === undefined) {
        this.#apply(book, askedAt, receivedAt, true);
      } else {
        const ts = withMilliseconds(book.timestamp);
        const orders = this.#apply(book, askedAt, receivedAt, false);
        const applied = await this.#cluster.produce(aggregateBook(book), ts, toIso(receivedAt), receivedAt);
        if (applied !== undefined) this.#applied(askedAt, { ...applied, changed: applied.changed || orders });
        cluster.share(this.key, () => ({ kind: 'book', receivedAt, book }));
      }
      this.emitPoll('book', 1, 'ok', askedAt);
    } catch (error) {
      if (this.removed) return;
      if (isMarketNotFound(error) && this.context.upstreamVerified()) {
        this.emitPoll('book', 1, 'not_found', askedAt, error);
        if (this.#cluster === undefined || (await this.#cluster.close())) this.#closeMarket();
        return;
      }
      this.failed('book', 1, askedAt, error);
    }
  }

  /**
   * Publishes a response to this relay's `orders` streams and, with `books` (a relay alone), to its
   * `book` streams too, then confirms the target. Returns whether an `orders` stream changed.
   */
  #apply(book: OrderBook, askedAt: number, receivedAt: number, books: boolean): boolean {
    if (!this.accepts(askedAt)) return false;
    const { registry, publisher } = this.context;
    const bookStreams = books ? registry.streamsOf('book', this.market) : new Set();
    const orders = registry.streamsOf('orders', this.market);
    if (bookStreams.size === 0 && orders.size === 0) return false;
    const ts = withMilliseconds(book.timestamp);
    const rts = toIso(receivedAt);
    let changed = false;
    let ordersChanged = false;
    let first = false;
    if (books) {
      const full = aggregateBook(book);
      for (const stream of registry.streamsOf('book', this.market)) {
        first ||= !stream.hasState;
        if (publisher.publish(stream, limitDepth(full, stream.depth ?? null), ts, rts, receivedAt))
          changed = true;
      }
    }
    if (orders.size > 0) {
      const state = ordersStateOf(book);
      for (const stream of orders) {
        first ||= !stream.hasState;
        if (publisher.publish(stream, state, ts, rts, receivedAt)) ordersChanged = true;
      }
    }
    if (books) this.confirmed(askedAt, first ? undefined : changed || ordersChanged);
    return ordersChanged;
  }

  /** A poll applied to the cluster's streams: ours (asked at `askedAt`), or the holder's. */
  #applied(askedAt: number, applied: AppliedPoll): void {
    if (this.accepts(askedAt)) this.confirmed(askedAt, applied.first ? undefined : applied.changed);
  }

  /** Upstream has no such market: its `book` and `orders` streams end. */
  #closeMarket(): void {
    this.context.closeMarket('book', this.market);
    this.context.closeMarket('orders', this.market);
  }

  /** Cluster mode: the holder's response, for this relay's `orders` streams. */
  #onShared(result: SharedResult): void {
    if (result.kind === 'book' && result.book.market_id.toLowerCase() === this.market)
      this.#apply(result.book, result.receivedAt, result.receivedAt, false);
  }
}

function toIso(at: number): string {
  return new Date(at).toISOString();
}
