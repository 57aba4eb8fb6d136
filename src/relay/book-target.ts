/**
 * @module relay/book-target
 * One market's order book as a poll target: one request serves every depth of the market, each
 * depth's stream gets the book limited to its depth. In cluster mode only the lease holder asks
 * upstream and numbers every depth's stream for the cluster (relay/cluster-stream.ts); the others
 * serve what it wrote.
 */
import type { BookState } from '../protocol/book.ts';
import type { BookData } from '../protocol/messages.ts';
import { isMarketNotFound } from '../upstream/errors.ts';
import type { OrderBook } from '../upstream/schemas.ts';
import { aggregateBook, limitDepth } from './aggregate.ts';
import { withMilliseconds } from './channels.ts';
import { bookClusterCodec } from './cluster-codecs.ts';
import type { AppliedPoll, ClusterTarget } from './cluster-stream.ts';
import type { TargetTiming } from './poll-scheduler.ts';
import { type PollContext, PollTarget } from './poll-target.ts';

export function bookTargetKey(market: string): string {
  return `book:${market}`;
}

export class BookTarget extends PollTarget {
  readonly kind = 'book';
  readonly market: string;
  /** Cluster mode: the market's streams as the cluster numbers them. */
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
        closeMarket: () => context.closeMarket('book', market),
      },
      (applied) => this.#applied(applied.receivedAt, applied),
    );
  }

  async poll(): Promise<void> {
    const { cluster, source, now } = this.context;
    const askedAt = this.beginAsk();
    try {
      const expectedIntervalMs = Math.min(
        this.timing.maxAgeMs,
        this.meanAskGapMs ?? this.timing.minIntervalMs,
      );
      this.followed = !(await cluster.claim(this.key, expectedIntervalMs));
      if (this.followed || this.removed) return;
      const book = await source.orderBook(this.market);
      if (this.removed) return;
      const receivedAt = now();
      if (this.#cluster === undefined) {
        this.#apply(book, askedAt, receivedAt);
      } else {
        const ts = withMilliseconds(book.timestamp);
        const applied = await this.#cluster.produce(aggregateBook(book), ts, toIso(receivedAt), receivedAt);
        if (applied !== undefined) this.#applied(askedAt, applied);
      }
      this.emitPoll('book', 1, 'ok', askedAt);
    } catch (error) {
      if (this.removed) return;
      if (isMarketNotFound(error) && this.context.upstreamVerified()) {
        this.emitPoll('book', 1, 'not_found', askedAt, error);
        if (this.#cluster === undefined || (await this.#cluster.close()))
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
    const rts = toIso(receivedAt);
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

  /** A poll applied to the cluster's streams: ours (asked at `askedAt`), or the holder's. */
  #applied(askedAt: number, applied: AppliedPoll): void {
    if (this.accepts(askedAt)) this.confirmed(askedAt, applied.first ? undefined : applied.changed);
  }
}

function toIso(at: number): string {
  return new Date(at).toISOString();
}
