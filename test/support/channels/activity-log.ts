/**
 * @module test/support/channels/activity-log
 * Upstream's activity log of one market for the property tests of walking it
 * (relay/channels/trades/relay-activity.ts): a log that grows between polls and between the page
 * requests of one poll, trimmed at its old end, listed in either order; a stream's polls over it as
 * the trades target makes them; and the states a client sees.
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import { TRADES_SNAPSHOT_SIZE } from '../../../packages/protocol/src/channels/trades/trades.ts';
import type { TradeEntry, TradesData } from '../../../packages/protocol/src/protocol/messages.ts';
import { diffTrades } from '../../../src/relay/channels/trades/relay.ts';
import {
  ACTIVITY_PAGE_SIZE,
  type ActivityOrder,
  type ActivityPage,
  MAX_FIRST_OLDEST_FIRST_ENTRIES,
  TRADE_IDS_REMEMBERED,
  TRADE_IDS_REMEMBERED_QUIET,
  TradeHistory,
  tradesStates,
  walkActivity,
} from '../../../src/relay/channels/trades/relay-activity.ts';
import { ids } from './trades-listing.ts';

/**
 * Upstream's activity log, oldest first, that grows between polls AND between the page requests
 * of one poll (the shift the walk must survive), trimmed at its old end like upstream's cap, and
 * listed in `order` (upstream's order is not shown), at most `pageCap` entries a page (upstream's
 * largest page is not shown).
 */
export class UpstreamLog {
  readonly entries: TradeEntry[] = [];
  #next = 0;
  requests = 0;
  /** Entries served since the count was last reset. */
  served = 0;
  constructor(
    readonly cap: number,
    readonly order: ActivityOrder = 'newest-first',
    readonly pageCap = ACTIVITY_PAGE_SIZE,
  ) {}

  trade(count: number): void {
    for (let n = 0; n < count; n++) {
      const id = `t${this.#next++}`;
      this.entries.push({
        activity_id: id,
        activity_type: 'TRADE',
        price: '0.50000000',
        size: '1',
        total_value: '0.5',
        activity_timestamp: new Date(1_700_000_000_000 + this.#next).toISOString(),
      });
    }
    if (this.entries.length > this.cap) this.entries.splice(0, this.entries.length - this.cap);
  }

  /** Serves one page after `arrivals` more trades happened (arrivals while the relay pages). */
  pager(arrivals: readonly number[]) {
    let request = 0;
    return async (offset: number, limit: number): Promise<ActivityPage> => {
      if (request > 0) this.trade(arrivals[(request - 1) % arrivals.length] ?? 0);
      request++;
      this.requests++;
      const count = Math.min(limit, this.pageCap);
      const { length } = this.entries;
      const entries =
        this.order === 'newest-first'
          ? this.entries.slice(Math.max(0, length - offset - count), Math.max(0, length - offset)).reverse()
          : this.entries.slice(offset, offset + count);
      this.served += entries.length;
      return { entries, hasMore: offset + entries.length < length };
    };
  }
}

/**
 * A stream's states for `fresh` as a client sees them: the entries of each update (the channel's
 * diff of two states), each state at most a snapshot's worth, and the last state.
 */
export function publish(state: TradesData | undefined, fresh: readonly TradeEntry[]) {
  const sent: TradeEntry[] = [];
  let current = state;
  for (const next of tradesStates(state, fresh)) {
    expect(next.trades.length).toBeLessThanOrEqual(TRADES_SNAPSHOT_SIZE);
    if (current !== undefined) {
      // What the stream sends for this state: the channel's own diff.
      const update = diffTrades(current, next);
      expect(update).not.toBeNull();
      sent.push(...update!.trades);
    }
    current = next;
  }
  return { sent, state: current };
}

export const number = (id: string): number => Number(id.slice(1));

/** Upstream's largest activity page: not shown, anything from 1 to the documented 100. */
export const pageCap = fc.oneof(
  fc.constant(ACTIVITY_PAGE_SIZE),
  fc.constant(20),
  fc.integer({ min: 1, max: ACTIVITY_PAGE_SIZE }),
);

/** Trades before a poll (sometimes a burst of several pages) and arrivals between its pages. */
export const poll = fc.record({
  before: fc.oneof(fc.nat(30), fc.integer({ min: 90, max: 450 })),
  between: fc.array(fc.nat(40), { minLength: 1, maxLength: 3 }),
});

export async function run(
  initial: number,
  polls: ReadonlyArray<{ before: number; between: readonly number[] }>,
  maxEntries: number,
  order: ActivityOrder = 'newest-first',
  pageCap = ACTIVITY_PAGE_SIZE,
  logCap = 100_000,
) {
  const log = new UpstreamLog(logCap, order, pageCap);
  log.trade(initial);
  const history = new TradeHistory();
  const delivered: TradeEntry[] = [];
  let state: TradesData | undefined;
  let complete = true;
  let largestRun = 0;
  // The first poll finds the initial log; the last sees no new trade, it collects what arrived
  // while the one before paged.
  const quiet = { before: 0, between: [0] };
  for (const { before, between } of [quiet, ...polls, quiet]) {
    log.trade(before);
    const firstPoll = !history.started;
    log.served = 0;
    const walk = await walkActivity(log.pager(between), history.seen, {
      firstPoll,
      maxEntries,
      listing: history.listing,
    });
    complete &&= walk.complete;
    // Bounds count entries, whatever the page size: a first poll reads a page or a snapshot's
    // worth newest first; oldest first its own bound, a page past it at most.
    const firstBound =
      order === 'newest-first'
        ? Math.max(ACTIVITY_PAGE_SIZE, TRADES_SNAPSHOT_SIZE)
        : MAX_FIRST_OLDEST_FIRST_ENTRIES + ACTIVITY_PAGE_SIZE;
    const laterBound = order === 'newest-first' ? maxEntries : maxEntries + ACTIVITY_PAGE_SIZE;
    expect(log.served).toBeLessThanOrEqual(firstPoll ? firstBound : laterBound);
    const fresh = history.absorb(walk.fresh);
    largestRun = Math.max(largestRun, walk.fresh.length);
    delivered.push(...fresh);
    const published = publish(state, fresh);
    if (state !== undefined) expect(published.sent).toEqual(fresh);
    // The snapshot holds the most recent entries, a snapshot's worth, whatever the page size.
    else expect(ids(published.state!.trades)).toEqual(ids(log.entries.slice(-TRADES_SNAPSHOT_SIZE)));
    state = published.state;
    expect(history.seen.size).toBeLessThanOrEqual(
      Math.min(TRADE_IDS_REMEMBERED, TRADE_IDS_REMEMBERED_QUIET + largestRun),
    );
    expect(state?.trades).toEqual(delivered.slice(-TRADES_SNAPSHOT_SIZE));
  }
  return { log, delivered, complete };
}

/** Everything the log holds from the stream's first delivered entry on. */
export const fromFirstDelivered = (log: UpstreamLog, delivered: readonly TradeEntry[]): string[] =>
  delivered.length === 0
    ? []
    : ids(log.entries).filter((id) => number(id) >= number(delivered[0]!.activity_id));
