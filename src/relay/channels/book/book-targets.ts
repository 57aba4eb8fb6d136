/**
 * @module relay/channels/book/book-targets
 * The poller pool's order-book targets (a `TargetCollection`, relay/poll/target-collection.ts): one
 * per market with `book` streams or streams of a channel served from the book (every depth and
 * every such channel share it), kept in line with the registry, each told its streams here as they
 * come and go; and the change hints
 * (relay/channels/book/change-hint-target.ts) that tell which books moved, read while worth it.
 */

import type { BookDepth, Channel } from '../../../../packages/protocol/src/protocol/messages.ts';
import type { PollDispatcher } from '../../poll/dispatcher.ts';
import type { HintOutcome } from '../../poll/outcomes.ts';
import type { PlannedTargets, PollIntervals, PollPlan } from '../../poll/plan.ts';
import { type FreshnessView, type PollContext, TargetsByKey } from '../../poll/poll-target.ts';
import type { SchedulerMode, TargetTiming } from '../../poll/scheduler.ts';
import type { CollectionParts, TargetCollection } from '../../poll/target-collection.ts';
import type { StreamRegistry } from '../../streams/registry.ts';
import type { AnyStream, StreamOf } from '../../streams/stream.ts';
import { bookServedChannels, type HintMapResponse, hintMap } from '../relay-registry.ts';
import { type BookStreams, BookTarget } from './book-target.ts';
import { ChangeHints, ChangeHintTarget } from './change-hint-target.ts';

/**
 * The streams one order-book request serves here: a market's `book` streams and its streams of the
 * channels served from the book (channels/relay-registry.ts `bookServedChannels`), in one pass.
 */
function bookStreamsOf(registry: StreamRegistry, market: string): BookStreams {
  const books: StreamOf<'book'>[] = [];
  const grouped: StreamOf<'book'>[] = [];
  for (const stream of registry.streamsOf('book', market))
    (stream.group === undefined ? books : grouped).push(stream);
  const served: BookStreams['served'][number][] = [];
  for (const channel of bookServedChannels) {
    const streams = registry.streamsOf(channel, market);
    if (streams.size > 0) served.push([channel, [...streams]]);
  }
  const wholeBook = grouped.length > 0 || served.length > 0;
  return { books, deepest: deepestOf(books), grouped, served, wholeBook };
}

/** The deepest of the streams' depths (null: the full book). */
function deepestOf(streams: readonly StreamOf<'book'>[]): BookDepth {
  let deepest = 0;
  for (const { depth } of streams) {
    if (depth === null || depth === undefined) return null;
    deepest = Math.max(deepest, depth);
  }
  return deepest as BookDepth;
}

/** All of them: whom the target is polled for (its holders), and which go stale when it does. */
function* everyStream({ books, grouped, served }: BookStreams): Iterable<AnyStream> {
  yield* books;
  yield* grouped;
  for (const [, streams] of served) yield* streams;
}

/** The hint map lists every market: worth asking for about once a second, not more. */
const HINTS_MIN_INTERVAL_MS = 1_000;

export class BookTargets implements TargetCollection<BookTarget> {
  /** `book`'s streams and those of the channels served from the book. */
  readonly channels: readonly Channel[] = ['book', ...bookServedChannels];
  readonly kind = 'book';
  readonly #context: PollContext;
  readonly #dispatcher: PollDispatcher;
  readonly #plan: PollPlan;
  readonly #scheduler: SchedulerMode;
  readonly #books = new TargetsByKey<BookTarget>((book) => everyStream(book.streams));
  readonly judged: FreshnessView = this.#books;
  /** Books whose last poll found the lease held by another relay, counted as polls find it. */
  #leasedElsewhere = 0;
  /** The hints, while worth reading; their own request only while no stream of the map's channel reads it. */
  #hints: ChangeHints | undefined;
  #hintTarget: ChangeHintTarget | undefined;

  constructor({ context, dispatcher, plan, scheduler }: CollectionParts) {
    this.#context = context;
    this.#dispatcher = dispatcher;
    this.#plan = plan;
    this.#scheduler = scheduler;
  }

  get size(): number {
    return this.#books.size;
  }

  /** Books this relay asks for itself: not those whose lease another relay holds. */
  get polledCount(): number {
    return this.#books.size - this.#leasedElsewhere;
  }

  follow(_channel: Channel, market: string): readonly BookTarget[] {
    this.syncOne(market, this.#plan.bookTiming());
    return [];
  }

  syncAll(): readonly BookTarget[] {
    this.sync(this.#plan.bookTiming());
    return [];
  }

  targetOf(_channel: Channel, market: string): BookTarget | undefined {
    return this.#books.get(market);
  }

  streamsOf(book: BookTarget): Iterable<AnyStream> {
    return everyStream(book.streams);
  }

  count(into: PlannedTargets): void {
    into.books += this.#books.size;
    into.polledBooks += this.polledCount;
  }

  targetCount(): number {
    return this.#books.size;
  }

  /** The hint map is worth reading only while the budget cannot poll every book at its minimum. */
  replanned(intervals: PollIntervals): void {
    const hints = this.#scheduler === 'freshness' && intervals.stretch > 1 && this.#books.size > 0;
    this.syncHints(hints, Math.max(this.#plan.bookTiming().minIntervalMs, HINTS_MIN_INTERVAL_MS));
  }

  hinted(outcome: HintOutcome): void {
    if (outcome.type === 'book_moved') this.hintBook(outcome.market, outcome.askedAt, outcome.movedAt);
    else this.hintMapRead(outcome.response, outcome.askedAt);
  }

  /** One target per market the registry holds streams served from its book of, new ones at `timing`. Walks them all. */
  sync(timing: TargetTiming): void {
    const { registry } = this.#context;
    const wanted = new Set(registry.ids('book').keys());
    for (const channel of bookServedChannels)
      for (const market of registry.ids(channel).keys()) wanted.add(market);
    for (const book of [...this.#books.values()]) if (!wanted.has(book.market)) this.#drop(book);
    for (const market of wanted) this.syncOne(market, timing);
  }

  /**
   * The one market whose streams served from its book came or went (the registry tells of every
   * stream it makes or removes, of any depth or group): its target made (at `timing`), told its
   * streams here, or dropped, whatever the number of other books.
   */
  syncOne(market: string, timing: TargetTiming): void {
    const streams = bookStreamsOf(this.#context.registry, market);
    const wanted = streams.books.length > 0 || streams.wholeBook;
    const book = this.#books.get(market);
    if (book === undefined) {
      if (wanted) this.#add(market, streams, timing);
    } else if (wanted) book.streams = streams;
    else this.#drop(book);
  }

  /**
   * The hint map is read while `wanted`, with a request of its own (every `everyMs`) only while no
   * stream of its channel asks for the same map.
   */
  syncHints(wanted: boolean, everyMs: number): void {
    if (wanted) this.#hints ??= new ChangeHints(this, (market) => this.#books.has(market));
    else this.#hints = undefined;
    const ownRequest = this.#hints !== undefined && this.#context.registry.ids(hintMap.channel).size === 0;
    if (ownRequest && this.#hints !== undefined && this.#hintTarget === undefined) {
      const timing = { minIntervalMs: everyMs, maxAgeMs: everyMs };
      this.#hintTarget = new ChangeHintTarget(timing, this.#context, this.#hints);
      this.#dispatcher.add(this.#hintTarget);
    } else if (!ownRequest && this.#hintTarget !== undefined) {
      this.#drop(this.#hintTarget);
      this.#hintTarget = undefined;
    }
  }

  /** The hint map asked for at `askedAt` arrived: the hints read it. */
  hintMapRead(response: HintMapResponse, askedAt: number): void {
    this.#hints?.read(response, askedAt);
  }

  /** A cheap request asked at `askedAt` shows the market's book moved, about `movedAt`. */
  hintBook(market: string, askedAt: number, movedAt: number): void {
    const book = this.#books.get(market);
    if (book === undefined || (book.lastAskedAt !== undefined && book.lastAskedAt >= askedAt)) return;
    book.hintedAt ??= Math.max(movedAt, book.lastAskedAt ?? movedAt);
  }

  /** A hint read asked at `askedAt` would have shown a move of the market's book. */
  coverBook(market: string, askedAt: number): void {
    const book = this.#books.get(market);
    if (book !== undefined) book.coveredAt = askedAt;
  }

  clear(): void {
    for (const book of [...this.#books.values()]) this.#drop(book);
  }

  #add(market: string, streams: BookStreams, timing: TargetTiming): void {
    const book = new BookTarget(market, streams, timing, this.#context, (elsewhere) => {
      this.#leasedElsewhere += elsewhere ? 1 : -1;
    });
    this.#books.set(market, book);
    this.#dispatcher.add(book);
  }

  #drop(target: BookTarget | ChangeHintTarget): void {
    target.removed = true;
    this.#dispatcher.remove(target.key);
    if (!(target instanceof BookTarget)) return;
    this.#books.delete(target.market);
    if (target.sentNothing) this.#leasedElsewhere -= 1;
    this.#hints?.forget(target.market);
    this.#context.cluster.forget(target.key);
  }
}
