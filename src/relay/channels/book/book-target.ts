/**
 * @module relay/channels/book/book-target
 * One market's order book as a poll target: one request serves every depth of the market's `book`
 * streams, each getting the book limited to its depth, and the market's streams of each channel
 * served from the book (channels/relay-registry.ts `bookServedChannels`), each getting its
 * channel's state of the book (polled for those alone too). The `book` streams are numbered by the
 * stream numbering it is given (relay/coordination/stream-numbering.ts): alone, this relay numbers
 * the changes the target makes of each of its streams; in cluster mode only the lease holder asks
 * upstream and numbers every depth for the cluster, which the others serve as they are, and shares
 * the response for their streams of the other channels. Grouped `book` streams (docs/protocol.md
 * "Grouped books") are served like the channels served from the book: each relay groups the one
 * response it polled or was shared, once per group step, and numbers them itself. The target is told
 * which of the market's streams are here as they come and go (`BookStreams`): a poll asks no registry.
 *
 * A book upstream answers with byte for byte as last time (most books, most polls) costs a
 * comparison: the upstream client resolves it to the book already validated (its ResponseMemo),
 * and the streams that hold that book are only confirmed, without aggregating or diffing again.
 * What the target keeps of the book it last applied is a `HeldBook` (below), so that a new book is
 * aggregated once per depth asked: the upstream client's memo of the response, the book last
 * applied and its levels once made, and the levels the body reader (./reader.ts) made of the body
 * just read. Once applied, the memo keeps a stand-in with empty sides instead of the parsed book,
 * so its entries die young; the whole book is parsed again from the body only when asked.
 */

import type { DefinedChannel } from '../../../../packages/protocol/src/channels/registry.ts';
import type { BookState } from '../../../../packages/protocol/src/protocol/book.ts';
import { groupBook } from '../../../../packages/protocol/src/protocol/group.ts';
import type { BookData, BookDepth } from '../../../../packages/protocol/src/protocol/messages.ts';
import { ResponseMemo } from '../../../upstream/client.ts';
import type { OrderBook } from '../../../upstream/schemas.ts';
import { TraceSpan } from '../../../util/tracing.ts';
import { bookNumberedCodec } from '../../coordination/codecs.ts';
import { bookTargetKey } from '../../coordination/redis/keys.ts';
import type { SharedResult } from '../../coordination/shared-result.ts';
import type {
  AppliedPoll,
  ChangeHere,
  PolledState,
  PollTimes,
  StreamNumbering,
} from '../../coordination/stream-numbering.ts';
import { marketId } from '../../poll/not-found.ts';
import type { PollOutcome } from '../../poll/outcomes.ts';
import { type PollContext, PollTarget, pollTimes } from '../../poll/poll-target.ts';
import type { TargetTiming } from '../../poll/scheduler.ts';
import type { StreamOf } from '../../streams/stream.ts';
import type { ChannelDelta, ChannelState } from '../codecs.ts';
import type { ServedFromBook } from '../relay-definition.ts';
import { bookServedChannels, relayChannels } from '../relay-registry.ts';
import { bookNumbering, limitDepth } from './codec.ts';
import { aggregateBook, aggregateSides } from './levels.ts';
import { readOrderBook } from './reader.ts';

export class BookTarget extends PollTarget {
  readonly kind = 'book';
  readonly market: string;
  /** The market's `book` streams, numbered by this relay alone or once for the cluster. */
  readonly #numbering: StreamNumbering<BookState, ChannelDelta<'book'>>;
  /** The book last applied, its levels, and the upstream client's memo of the response. */
  readonly #held = new HeldBook();
  /** Bodies read straight to levels: when the numbering wants no more than this relay's `book` streams show. */
  readonly #reading = { memo: this.#held.memo, read: (body: Buffer) => this.#read(body) };

  /** Told when a poll finds the lease moved to or from another relay (what the plan counts). */
  readonly #leaseMoved: (elsewhere: boolean) => void;
  /**
   * The market's streams here, made again by `BookTargets` whenever one comes or goes. Read once
   * the response has arrived, so a stream subscribed or removed meanwhile gets or skips it.
   */
  streams: BookStreams;

  constructor(
    market: string,
    streams: BookStreams,
    timing: TargetTiming,
    context: PollContext,
    leaseMoved: (elsewhere: boolean) => void,
  ) {
    super(bookTargetKey(market), timing, context);
    this.market = market;
    this.streams = streams;
    this.#leaseMoved = leaseMoved;
    this.#numbering = context.cluster.streams(
      this.key,
      market,
      bookNumberedCodec,
      {
        registry: context.registry,
        publisher: context.publisher,
        now: context.now,
        closeMarket: () => {
          for (const outcome of this.#notFound()) context.report(outcome);
        },
      },
      (applied) => this.#applied(applied.receivedAt, applied),
    );
    // Only a channel served from the book uses another relay's response: the `book` streams follow
    // what the lease holder numbered.
    context.cluster.follow(
      this.key,
      (result) => this.#onShared(result),
      () => this.streams.wholeBook,
    );
  }

  protected pollOnce(): Promise<readonly PollOutcome[]> {
    const { tracing } = this.context;
    const trace = tracing === undefined ? undefined : TraceSpan.root(tracing, 'book poll');
    // An untraced poll (most, or all) costs nothing more than the comparison.
    if (trace === undefined) return this.#poll(undefined);
    trace.set({ 'market_relay.market': this.market });
    return this.#poll(trace).finally(() => trace.end());
  }

  /** One poll, in its trace when it is sampled (docs/operations.md "Traces"). */
  async #poll(trace: TraceSpan | undefined): Promise<readonly PollOutcome[]> {
    const { cluster } = this.context;
    const askedAt = this.beginAsk();
    try {
      const elsewhere = !(await this.holdsLease());
      if (elsewhere !== this.sentNothing && !this.removed) this.#leaseMoved(elsewhere);
      this.sentNothing = elsewhere;
      if (this.sentNothing) {
        trace?.set({ 'market_relay.outcome': 'lease_elsewhere' });
        return [];
      }
      const whole = this.#numbering.keepsWholeState;
      const reading = trace === undefined ? this.#reading : { ...this.#reading, trace };
      const asked = this.source.orderBook(this.market, reading);
      // Older than one applied (not `accepted`): none of it is served here; the cluster's numbering
      // ranks it by fencing.
      const { value: book, times, accepted } = await this.answered(askedAt, asked, trace);
      if (this.removed) return [];
      const { receivedAt } = times;
      const same = accepted && this.#held.apply(book);
      const served = accepted ? this.#applyServed(book, same, times) : undefined;
      const polled: PolledState<BookState, BookData> = whole
        ? { whole: this.#held.aggregated(book, null) }
        : { here: accepted ? this.#changes(book, same) : [] };
      const books = await this.#numbering.produce(polled, times);
      const applied = books === undefined ? served : joined(served, books);
      if (applied !== undefined) this.#applied(askedAt, { receivedAt, ...applied });
      // Not when the numbering keeps the whole state: the cluster's shares the book.
      if (!whole) this.#held.keepLess(book);
      cluster.share(this.key, () => ({ kind: 'book', receivedAt, book: this.#held.whole(book) }));
      this.emitPoll('book', 1, 'ok', askedAt);
      trace?.set({ 'market_relay.outcome': 'ok', 'market_relay.changed': books?.changed ?? false });
      return [];
    } catch (error) {
      if (this.removed) return [];
      trace?.fail(error);
      if (this.context.existence.isGone(error, marketId(this.market))) {
        this.emitPoll('book', 1, 'not_found', askedAt, error);
        return (await this.#numbering.close()) ? this.#notFound() : [];
      }
      return this.failed('book', 1, askedAt, error);
    }
  }

  /**
   * Publishes a response applied (`same`: the same as the last, whose streams are only confirmed)
   * to this relay's streams of the channels served from the book, and to its grouped books.
   * Undefined when no such stream is here.
   */
  #applyServed(book: OrderBook, same: boolean, times: PollTimes): ServedPoll | undefined {
    let applied: ServedPoll | undefined;
    for (const [channel, streams] of this.streams.served) {
      // Only the channels of bookServedChannels are here: those whose relay part has `fromBook`.
      const served = relayChannels[channel].fromBook as ServedFromBook<ChannelState<typeof channel>>;
      applied = joined(applied, this.#publishServed(streams, served, book, same, times));
    }
    const grouped = this.#publishGrouped(book, same, times);
    return grouped === undefined ? applied : joined(applied, grouped);
  }

  /**
   * Publishes the book summed into each held group step (grouped once per step, whatever the
   * depths) to this relay's grouped `book` streams; undefined when none is here.
   */
  #publishGrouped(book: OrderBook, same: boolean, times: PollTimes): ServedPoll | undefined {
    const { publisher } = this.context;
    const streams = this.streams.grouped;
    if (streams.length === 0) return undefined;
    const byGroup = new Map<string, BookState>();
    let changed = false;
    let first = false;
    for (const stream of streams) {
      const group = stream.group as string;
      first ||= !stream.hasState;
      if (same && stream.hasState) {
        publisher.confirm(stream, times.rts, times.receivedAt);
        continue;
      }
      let grouped = byGroup.get(group);
      if (grouped === undefined) {
        grouped = groupBook(this.#held.aggregated(book, null), group);
        byGroup.set(group, grouped);
      }
      const state = limitDepth(grouped, stream.depth ?? null);
      if (publisher.publish(stream, state, times.ts, times.rts, times.receivedAt)) changed = true;
    }
    return { changed, first };
  }

  /** Publishes the book to this relay's streams of one channel served from it (at least one). */
  #publishServed<C extends DefinedChannel>(
    streams: readonly StreamOf<C>[],
    served: ServedFromBook<ChannelState<C>>,
    book: OrderBook,
    same: boolean,
    { ts, rts, receivedAt, trace }: PollTimes,
  ): ServedPoll {
    const { publisher } = this.context;
    let changed = false;
    let first = false;
    let state: ChannelState<C> | undefined;
    for (const stream of streams) {
      first ||= !stream.hasState;
      if (same && stream.hasState) {
        publisher.confirm(stream, rts, receivedAt);
        continue;
      }
      state ??= served.stateOf(this.#held.whole(book));
      if (publisher.publish(stream, state, ts, rts, receivedAt, trace)) changed = true;
    }
    return { changed, first };
  }

  /**
   * A body read straight to the levels its `book` streams show (`HeldBook` below; all of them when the
   * cluster's numbering keeps the whole state). Undefined (read the general way) when the reader does
   * not handle the body, or when a channel served from the book needs it whole anyway.
   */
  #read(body: Buffer): OrderBook | undefined {
    const { wholeBook, deepest } = this.streams;
    if (wholeBook) return undefined;
    return this.#held.read(body, this.#numbering.keepsWholeState ? null : deepest);
  }

  /** A book confirmed: how long since the last, counted (a price batch counts its markets' own). */
  protected override confirmed(askedAt: number, changed: boolean | undefined): void {
    const ageMs = this.context.now() - (this.confirmedAt ?? this.addedAt);
    super.confirmed(askedAt, changed);
    this.context.events.emit('poll:confirmed', { kind: 'book', ageMs });
  }

  /** A poll applied to the cluster's streams: ours (asked at `askedAt`), or the holder's. */
  #applied(askedAt: number, applied: AppliedPoll): void {
    if (this.accepts(askedAt)) this.confirmed(askedAt, applied.first ? undefined : applied.changed);
  }

  /** Upstream has no such market: its `book` streams and those of the channels served from it end. */
  #notFound(): PollOutcome[] {
    return ['book' as const, ...bookServedChannels].map((kind) => ({
      type: 'not_found',
      kind,
      id: this.market,
    }));
  }

  /** Cluster mode: the holder's response, for this relay's streams of the channels served from the book. */
  #onShared(result: SharedResult): void {
    if (result.kind !== 'book' || result.book.market_id.toLowerCase() !== this.market) return;
    const { book, receivedAt } = result;
    if (!this.accepts(receivedAt)) return;
    this.#applyServed(book, this.#held.apply(book), pollTimes(book.timestamp, receivedAt, receivedAt));
  }

  /**
   * This relay's ungrouped `book` streams, each with this poll's change there from the state it
   * holds (cut, diff, checksum), so numbering and the stream only number and frame it. A book the
   * same as the last applied (`same`) only confirms the streams that hold it.
   */
  #changes(book: OrderBook, same: boolean): ChangeHere<BookState, BookData>[] {
    const { books, deepest } = this.streams;
    let levels: BookState | undefined;
    return books.map((stream) => {
      const held = stream.state;
      if (same && held !== undefined)
        return { stream, change: { state: held, delta: null, checksum: undefined } };
      levels ??= this.#held.aggregated(book, deepest);
      const state = bookNumbering.project(levels, stream.depth);
      const delta = held === undefined ? undefined : bookNumbering.diff(held, state);
      const checksum = delta === null ? undefined : bookNumbering.checksum?.(state);
      return { stream, change: { state, delta, checksum } };
    });
  }
}

/** What publishing one poll to a part of the target's streams did. */
type ServedPoll = Omit<AppliedPoll, 'receivedAt'>;

/** What two parts of one poll did together. */
function joined(a: ServedPoll | undefined, b: ServedPoll): ServedPoll {
  return { changed: (a?.changed ?? false) || b.changed, first: (a?.first ?? false) || b.first };
}

/**
 * The market's streams a book target serves here, taken from the registry in one pass whenever one
 * of them comes or goes (book-targets.ts `bookStreamsOf`), not on each poll.
 */
export interface BookStreams {
  /** The ungrouped `book` streams: those its numbering numbers. */
  readonly books: readonly StreamOf<'book'>[];
  /** The deepest of their depths (null: the full book). */
  readonly deepest: BookDepth;
  /** The grouped `book` streams, grouped and numbered by this relay from the book it has. */
  readonly grouped: readonly StreamOf<'book'>[];
  /** Each channel served from the book with streams here, and those streams. */
  readonly served: readonly (readonly [DefinedChannel, readonly StreamOf<DefinedChannel>[]])[];
  /** A grouped book or a channel served from the book is here: the book is needed whole. */
  readonly wholeBook: boolean;
}

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

  /** The book whole: a stand-in's (applied or only read) from the body it came from, parsed again. */
  whole(book: OrderBook): OrderBook {
    const standIn =
      (this.#last?.book === book && this.#last.standIn === true) || this.#lastRead?.book === book;
    return standIn ? (this.memo.reparse() ?? book) : book;
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
