/**
 * @module relay/channels/trades/relay-activity
 * The `trades` channel's core (docs/protocol.md "`trades` data"), free of I/O: walking upstream's
 * activity listing page by page until it reaches an entry already seen, and a stream's bounded
 * memory of what it delivered, so each `activity_id` goes out once per stream.
 *
 * The listing's order is not shown upstream: the relay reads it from the entries' times.
 * Every page is asked where the entries served so far end and every bound counts entries, since
 * upstream may serve fewer than asked (upstream/paging.ts). Newest first, upstream pages by offset
 * over a list that grows at its head while the relay pages through it: a trade arriving between
 * two page requests shifts every older entry down, so the next page repeats the previous page's
 * tail. Repeats are skipped by id; the new head is left for the next
 * poll, whose first page starts with it. Nothing is skipped over, because entries only ever move
 * to higher offsets (a log trimmed at its old end moves nothing).
 *
 * Oldest first, the list grows at its end, which only `hasMore` finds (activity pages carry no
 * `total`): a walk starts at the last entry the last one read, steps back a page at a time while
 * its first page does not start with an entry already delivered (the log was trimmed at its old
 * end, moving everything down), then reads forward to the end. A stream's first walk reads from
 * the start, bounded, and keeps the last 100 entries.
 */

import { RecentIds } from '../../../../packages/protocol/src/channels/trades/recent-ids.ts';
import {
  TRADES_SNAPSHOT_SIZE,
  type TradeEntry,
  type TradesData,
} from '../../../../packages/protocol/src/channels/trades/trades.ts';
import { type ReadPage, readPages, type ServedPage } from '../../../upstream/paging.ts';

/** Entries asked per activity request: upstream's documented maximum (it may serve fewer). */
export const ACTIVITY_PAGE_SIZE = 100;
/**
 * Entries one poll reads at most, whatever page size upstream serves: a burst of more than this
 * many trades between two polls loses its oldest entries rather than holding one target's poll for
 * ever (docs/protocol.md "Limits"); the target reports each such walk (`trades:truncated`) to the
 * operator.
 */
export const MAX_ACTIVITY_ENTRIES = 500;

/** How many entries a stream's first walk of an oldest-first listing reads at most to find its end. */
export const MAX_FIRST_OLDEST_FIRST_ENTRIES = 2_000;

/**
 * The `activity_id`s a stream remembers at most ({@link TradeHistory}): more than one later poll and
 * one snapshot bring. A later walk reads at most MAX_ACTIVITY_ENTRIES newest first and a page more
 * oldest first (it checks its bound after each page), and a cluster peer's share repeats at most a
 * snapshot's worth of what this stream already delivered.
 */
export const TRADE_IDS_REMEMBERED = MAX_ACTIVITY_ENTRIES + ACTIVITY_PAGE_SIZE + TRADES_SNAPSHOT_SIZE;

/**
 * The `activity_id`s a stream whose polls bring a few trades each remembers: what a walk meets of
 * the entries it delivered before it stops (newest first, the newest delivered one, or entries of
 * the same time listed in another order, within a page; oldest first, stepping back past a trimmed
 * start, less than a page), and a snapshot's worth a cluster peer's share repeats. A stream widens
 * its memory by the largest run it took ({@link TradeHistory.absorb}), up to
 * {@link TRADE_IDS_REMEMBERED}: a quiet market's memory would otherwise take hours of trades to fill
 * to that bound, about 45 KB a stream, growth no one could tell from a leak.
 */
export const TRADE_IDS_REMEMBERED_QUIET = ACTIVITY_PAGE_SIZE + TRADES_SNAPSHOT_SIZE;

export type ActivityOrder = 'newest-first' | 'oldest-first';

/** One page of upstream's activity listing, its entries in upstream's order. */
export type ActivityPage = ServedPage<TradeEntry>;

/** Asks upstream for the page of entries starting at `offset` in its listing. */
export type FetchActivityPage = ReadPage<TradeEntry>;

/** What one stream's walks learnt of upstream's listing: its order, and where the last walk ended. */
export interface ActivityListing {
  order?: ActivityOrder;
  /** Oldest first: the offset just past the last entry the last walk read. */
  end?: number;
}

export interface ActivityWalk {
  /** Entries not seen before, oldest first, each id once. */
  fresh: TradeEntry[];
  /** Requests made. */
  pages: number;
  /**
   * False when the walk stopped at its entry bound before reaching a seen entry or the end of the
   * listing: older new entries, if any, were not fetched.
   */
  complete: boolean;
}

export interface WalkOptions {
  /**
   * A new stream's first poll: a snapshot's worth of the most recent entries is enough (newest
   * first), the stream starts from them.
   */
  firstPoll: boolean;
  /** Entries read at most ({@link MAX_ACTIVITY_ENTRIES} unless said). */
  maxEntries?: number;
  /** The stream's memory of the listing, updated by the walk (a fresh one without). */
  listing?: ActivityListing;
}

/** Collects the entries of the listing newer than the newest entry `seen` remembers. */
export async function walkActivity(
  fetchPage: FetchActivityPage,
  seen: { has(id: string): boolean },
  { firstPoll, maxEntries = MAX_ACTIVITY_ENTRIES, listing = {} }: WalkOptions,
): Promise<ActivityWalk> {
  let requests = 0;
  const fetchCounted: FetchActivityPage = (offset, limit) => {
    requests += 1;
    return fetchPage(offset, limit);
  };
  const { pages: early, reread } =
    listing.order === 'oldest-first'
      ? { pages: new Map<number, ActivityPage>(), reread: 0 }
      : await readOrder(fetchCounted, listing);
  if (listing.order === 'oldest-first') {
    const walk = await walkOldestFirst(fetchCounted, seen, listing, firstPoll, maxEntries - reread, early);
    return { ...walk, pages: requests };
  }
  const newestFirst: TradeEntry[] = [];
  const collected = new Set<string>();
  let headNewestAt = Number.POSITIVE_INFINITY;
  const read = await readPages(
    async (offset, limit) => early.get(offset) ?? fetchCounted(offset, limit),
    { limit: ACTIVITY_PAGE_SIZE, maxEntries: firstPoll ? TRADES_SNAPSHOT_SIZE : maxEntries - reread },
    (page, offset) => {
      if (offset === 0) headNewestAt = Math.max(...page.entries.map(timeOf));
      for (const entry of page.entries) {
        if (seen.has(entry.activity_id)) return true;
        if (collected.has(entry.activity_id)) continue;
        // Newer than the walk's first page: it arrived while the walk paged (more trades than a
        // page holds pushed it down to the offset asked); the next poll's first page has it.
        if (timeOf(entry) > headNewestAt) continue;
        collected.add(entry.activity_id);
        newestFirst.push(entry);
      }
      return false;
    },
  );
  // A first poll stops at a snapshot's worth by design.
  const complete = firstPoll || read.stopped !== 'bound';
  return { fresh: newestFirst.reverse(), pages: requests, complete };
}

/**
 * Reads the listing's first pages until they show its order, unless `listing` knows it; returns
 * them by offset. One page is one consistent answer: two entries of different times in it tell the
 * order. Entries of different pages tell it only if the listing did not move between the requests
 * (trades arriving at the head of a newest-first listing shift it, and the next page then starts
 * with an entry newer than the last one seen, which reads as oldest first), so that comparison
 * holds only when the head read again is the head read first. `reread`: the entries of that
 * second read, which count against the walk's bound.
 */
async function readOrder(
  fetchPage: FetchActivityPage,
  listing: ActivityListing,
): Promise<{ pages: Map<number, ActivityPage>; reread: number }> {
  const pages = new Map<number, ActivityPage>();
  const entries: TradeEntry[] = [];
  await readPages(
    fetchPage,
    { limit: ACTIVITY_PAGE_SIZE, maxEntries: ACTIVITY_PAGE_SIZE },
    (page, offset) => {
      pages.set(offset, page);
      entries.push(...page.entries);
      listing.order ??= orderOf(page.entries);
      return listing.order !== undefined || orderOf(entries) !== undefined;
    },
  );
  const acrossPages = orderOf(entries);
  if (listing.order !== undefined || acrossPages === undefined) return { pages, reread: 0 };
  const head = await fetchPage(0, ACTIVITY_PAGE_SIZE);
  if (head.entries[0]?.activity_id === entries[0]?.activity_id) listing.order = acrossPages;
  return { pages, reread: head.entries.length };
}

const timeOf = (entry: TradeEntry): number => Date.parse(entry.activity_timestamp);

/** The order a page's entries show by their times; undefined when they cannot tell. */
export function orderOf(entries: readonly TradeEntry[]): ActivityOrder | undefined {
  const first = Date.parse(entries[0]?.activity_timestamp ?? '');
  const last = Date.parse(entries.at(-1)?.activity_timestamp ?? '');
  if (Number.isNaN(first) || Number.isNaN(last) || first === last) return undefined;
  return first > last ? 'newest-first' : 'oldest-first';
}

async function walkOldestFirst(
  fetchPage: FetchActivityPage,
  seen: { has(id: string): boolean },
  listing: ActivityListing,
  firstPoll: boolean,
  maxEntries: number,
  early: ReadonlyMap<number, ActivityPage>,
): Promise<Omit<ActivityWalk, 'pages'>> {
  const bound = firstPoll || listing.end === undefined ? MAX_FIRST_OLDEST_FIRST_ENTRIES : maxEntries;
  const cached = new Map(early);
  let entriesRead = 0;
  for (const page of early.values()) entriesRead += page.entries.length;
  const pageAt = async (offset: number, limit = ACTIVITY_PAGE_SIZE): Promise<ActivityPage> => {
    let page = cached.get(offset);
    if (page === undefined) {
      page = await fetchPage(offset, limit);
      entriesRead += page.entries.length;
      cached.set(offset, page);
    }
    return page;
  };
  // From the last entry read last time: one request when fewer than a page arrived since.
  let offset = firstPoll ? 0 : Math.max(0, (listing.end ?? 0) - 1);
  let page = await pageAt(offset);
  // A page after the start must begin with an entry already delivered, or some before it are new.
  // Stepping back by the page size asked may go further than upstream's pages reach: the entries
  // read again are skipped as seen.
  while (offset > 0 && entriesRead < bound && !(page.entries[0] && seen.has(page.entries[0].activity_id))) {
    offset = Math.max(0, offset - ACTIVITY_PAGE_SIZE);
    page = await pageAt(offset);
  }
  // A stream that delivered entries before this listing was known to it (it took a cluster peer's
  // shares, then the lease) reads from the start: only what follows the last entry it delivered is
  // new; earlier entries it no longer remembers are older than that one, not new.
  const fromDelivered = !firstPoll && listing.end === undefined;
  let fresh: TradeEntry[] = [];
  const collected = new Set<string>();
  const read = await readPages(
    pageAt,
    { from: offset, limit: ACTIVITY_PAGE_SIZE, maxEntries: Number.POSITIVE_INFINITY },
    (served) => {
      for (const entry of served.entries) {
        if (seen.has(entry.activity_id)) {
          if (fromDelivered) fresh = [];
          continue;
        }
        if (collected.has(entry.activity_id)) continue;
        collected.add(entry.activity_id);
        fresh.push(entry);
      }
      return entriesRead >= bound;
    },
  );
  listing.end = read.end;
  return { fresh: firstPoll ? fresh.slice(-ACTIVITY_PAGE_SIZE) : fresh, complete: read.stopped === 'end' };
}

/**
 * What a trades stream has delivered, as far as a poll needs it: a bounded memory of ids (about 70
 * bytes each with the set's own), {@link TRADE_IDS_REMEMBERED_QUIET} of them, and for a stream that
 * took a larger run at once that run's length more, up to {@link TRADE_IDS_REMEMBERED}. It stays
 * correct past its bound because a walk stops at the newest seen entry and forgotten ids are always
 * older than every remembered one; it only has to hold more ids than one poll and one snapshot bring
 * (checked by the tests).
 */
export class TradeHistory {
  readonly seen = new RecentIds(TRADE_IDS_REMEMBERED_QUIET);
  /** What the stream's walks learnt of upstream's listing. */
  readonly listing: ActivityListing = {};
  #started = false;

  /** Whether a first response was taken (the stream has its snapshot). */
  get started(): boolean {
    return this.#started;
  }

  /**
   * Takes a run of entries, oldest first (a walk's fresh entries, or what a cluster peer shares),
   * and returns those this stream has not delivered, oldest first.
   */
  absorb(entries: readonly TradeEntry[]): TradeEntry[] {
    this.#started = true;
    this.seen.widen(Math.min(TRADE_IDS_REMEMBERED, TRADE_IDS_REMEMBERED_QUIET + entries.length));
    return entries.filter((entry) => this.seen.add(entry.activity_id));
  }
}

/**
 * The successive stream states that deliver `fresh` (oldest first): a first state is the snapshot
 * of the most recent entries; after that each state adds at most TRADES_SNAPSHOT_SIZE entries, so a
 * burst goes out as several updates and a snapshot never holds more than TRADES_SNAPSHOT_SIZE.
 */
export function tradesStates(state: TradesData | undefined, fresh: readonly TradeEntry[]): TradesData[] {
  if (state === undefined) return [{ trades: fresh.slice(-TRADES_SNAPSHOT_SIZE) }];
  const states: TradesData[] = [];
  let trades = state.trades;
  for (let start = 0; start < fresh.length; start += TRADES_SNAPSHOT_SIZE) {
    trades = [...trades, ...fresh.slice(start, start + TRADES_SNAPSHOT_SIZE)].slice(-TRADES_SNAPSHOT_SIZE);
    states.push({ trades });
  }
  return states;
}

/**
 * What a poll shares with cluster peers: every fresh entry and at least the most recent ones of
 * the stream's state after them (a peer that just started takes its snapshot from those), oldest
 * first.
 */
export function sharedWindow(state: TradesData, fresh: readonly TradeEntry[]): readonly TradeEntry[] {
  return fresh.length > state.trades.length ? fresh : state.trades;
}
