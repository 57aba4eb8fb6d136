/**
 * @module relay/channels/trades
 * The `trades` channel's core (docs/protocol.md "`trades` data"), free of I/O: walking upstream's
 * newest-first activity listing page by page until it reaches an entry already seen, and a
 * stream's bounded memory of what it delivered, so each `activity_id` goes out once per stream.
 *
 * Upstream pages by offset over a list that grows at its head while the relay pages through it:
 * a trade arriving between two page requests shifts every older entry down, so the next page
 * repeats the previous page's tail. Repeats are skipped by id; the new head is left for the next
 * poll, whose first page starts with it. Nothing is skipped over, because entries only ever move
 * to higher offsets (a log trimmed at its old end moves nothing).
 */

import { TRADES_SNAPSHOT_SIZE } from '../../protocol/channels.ts';
import { TRADES_SEEN_IDS } from '../../protocol/limits.ts';
import type { TradeEntry, TradesData } from '../../protocol/messages.ts';
import { RecentIds } from '../../protocol/recent-ids.ts';

/** Entries asked per activity request: upstream's maximum page size. */
export const ACTIVITY_PAGE_SIZE = 100;
/**
 * Pages one poll walks at most: a burst of more than this many pages of trades between two polls
 * loses its oldest entries rather than holding one target's poll for ever (docs/protocol.md "Limits");
 * the target reports each such walk (`trades:truncated`) to the operator.
 */
export const MAX_ACTIVITY_PAGES = 5;

export interface ActivityPage {
  /** Newest first, as upstream lists them. */
  activity: readonly TradeEntry[];
  hasMore: boolean;
}

/** Asks upstream for the page of entries starting `offset` entries below the newest. */
export type FetchActivityPage = (offset: number, limit: number) => Promise<ActivityPage>;

export interface ActivityWalk {
  /** Entries not seen before, oldest first, each id once. */
  fresh: TradeEntry[];
  /** Requests made. */
  pages: number;
  /**
   * False when the walk stopped at the page bound before reaching a seen entry or the end of the
   * listing: older new entries, if any, were not fetched.
   */
  complete: boolean;
}

export interface WalkOptions {
  /** A new stream's first poll: one page is enough, the stream starts from the most recent entries. */
  firstPoll: boolean;
  maxPages?: number;
}

/** Collects the entries of the listing newer than the newest entry `seen` remembers. */
export async function walkActivity(
  fetchPage: FetchActivityPage,
  seen: { has(id: string): boolean },
  { firstPoll, maxPages = MAX_ACTIVITY_PAGES }: WalkOptions,
): Promise<ActivityWalk> {
  const newestFirst: TradeEntry[] = [];
  const collected = new Set<string>();
  let offset = 0;
  let pages = 0;
  for (;;) {
    const page = await fetchPage(offset, ACTIVITY_PAGE_SIZE);
    pages += 1;
    for (const entry of page.activity) {
      if (seen.has(entry.activity_id)) return { fresh: newestFirst.reverse(), pages, complete: true };
      if (collected.has(entry.activity_id)) continue;
      collected.add(entry.activity_id);
      newestFirst.push(entry);
    }
    const end = !page.hasMore || page.activity.length === 0 || firstPoll;
    if (end) return { fresh: newestFirst.reverse(), pages, complete: true };
    if (pages >= maxPages) return { fresh: newestFirst.reverse(), pages, complete: false };
    offset += page.activity.length;
  }
}

/**
 * What a trades stream has delivered, as far as a poll needs it: a bounded memory of ids
 * (TRADES_SEEN_IDS, about 40 bytes each). It stays correct past its bound because a walk stops at
 * the newest seen entry and forgotten ids are always older than every remembered one; it only has
 * to hold more ids than one poll and one snapshot bring (checked by the tests).
 */
export class TradeHistory {
  readonly seen = new RecentIds(TRADES_SEEN_IDS);
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
