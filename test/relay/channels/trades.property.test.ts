import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TRADES_SNAPSHOT_SIZE } from '../../../packages/protocol/src/channels/trades/trades.ts';
import type { TradeEntry, TradesData } from '../../../packages/protocol/src/protocol/messages.ts';
import { diffTrades } from '../../../src/relay/channels/trades/relay.ts';
import {
  ACTIVITY_PAGE_SIZE,
  type ActivityOrder,
  type ActivityPage,
  MAX_ACTIVITY_ENTRIES,
  MAX_FIRST_OLDEST_FIRST_ENTRIES,
  sharedWindow,
  TRADE_IDS_REMEMBERED,
  TRADE_IDS_REMEMBERED_QUIET,
  TradeHistory,
  tradesStates,
  walkActivity,
} from '../../../src/relay/channels/trades/relay-activity.ts';
import { propertyRuns } from '../../support/property-runs.ts';

/**
 * Upstream's activity log, oldest first, that grows between polls AND between the page requests
 * of one poll (the shift the walk must survive), trimmed at its old end like upstream's cap, and
 * listed in `order` (upstream's order is not shown), at most `pageCap` entries a page (upstream's
 * largest page is not shown).
 */
class UpstreamLog {
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
function publish(state: TradesData | undefined, fresh: readonly TradeEntry[]) {
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

const ids = (entries: readonly TradeEntry[]): string[] => entries.map((entry) => entry.activity_id);
const number = (id: string): number => Number(id.slice(1));

/** Upstream's largest activity page: not shown, anything from 1 to the documented 100. */
const pageCap = fc.oneof(
  fc.constant(ACTIVITY_PAGE_SIZE),
  fc.constant(20),
  fc.integer({ min: 1, max: ACTIVITY_PAGE_SIZE }),
);

/** Trades before a poll (sometimes a burst of several pages) and arrivals between its pages. */
const poll = fc.record({
  before: fc.oneof(fc.nat(30), fc.integer({ min: 90, max: 450 })),
  between: fc.array(fc.nat(40), { minLength: 1, maxLength: 3 }),
});

async function run(
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
const fromFirstDelivered = (log: UpstreamLog, delivered: readonly TradeEntry[]): string[] =>
  delivered.length === 0
    ? []
    : ids(log.entries).filter((id) => number(id) >= number(delivered[0]!.activity_id));

describe('trades: walking the activity listing', () => {
  it.each(['newest-first', 'oldest-first'] as const)(
    'a later poll after a long burst brings no more than a stream remembers, less a snapshot (%s listing)',
    async (order) => {
      // Pages one short of what a walk asks: oldest first, the last page read passes the bound most.
      const log = new UpstreamLog(100_000, order, ACTIVITY_PAGE_SIZE - 1);
      log.trade(300);
      const history = new TradeHistory();
      history.absorb(
        (await walkActivity(log.pager([0]), history.seen, { firstPoll: true, listing: history.listing }))
          .fresh,
      );
      log.trade(5_000);
      const walk = await walkActivity(log.pager([0]), history.seen, {
        firstPoll: false,
        listing: history.listing,
      });
      expect(walk.complete).toBe(false);
      expect(walk.fresh.length).toBeGreaterThanOrEqual(MAX_ACTIVITY_ENTRIES - 1);
      expect(walk.fresh.length + TRADES_SNAPSHOT_SIZE).toBeLessThanOrEqual(TRADE_IDS_REMEMBERED);
    },
  );

  it.each(['newest-first', 'oldest-first'] as const)(
    'delivers every entry from the first page on exactly once, oldest first, whatever arrives while paging (%s listing)',
    async (order) => {
      await fc.assert(
        fc.asyncProperty(
          fc.nat(250),
          fc.array(poll, { maxLength: 8 }),
          pageCap,
          async (initial, polls, cap) => {
            // A listing growing by half a page or more between two page requests grows faster than
            // anyone can read it to its end: here it grows by less.
            const paced = polls.map(({ before, between }) => ({
              before,
              between: between.map((arrivals) => Math.min(arrivals, Math.floor((cap - 1) / 2))),
            }));
            const { log, delivered } = await run(initial, paced, Number.MAX_SAFE_INTEGER, order, cap);
            // Everything from the oldest entry of the first snapshot to the newest, in order, each once.
            expect(ids(delivered)).toEqual(fromFirstDelivered(log, delivered));
          },
        ),
        { numRuns: propertyRuns(60) },
      );
    },
  );

  it('with the entry bound: each entry at most once and in order; all of them when no walk hit the bound', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.nat(250),
        fc.array(poll, { maxLength: 8 }),
        pageCap,
        async (initial, polls, cap) => {
          // Arrivals between page requests up to a page and one (newer entries then reach the
          // offsets asked), and no more, to keep the case small.
          const paced = polls.map(({ before, between }) => ({
            before,
            between: between.map((arrivals) => Math.min(arrivals, cap + 1)),
          }));
          const { log, delivered, complete } = await run(
            initial,
            paced,
            MAX_ACTIVITY_ENTRIES,
            'newest-first',
            cap,
          );
          const numbers = ids(delivered).map(number);
          for (let i = 1; i < numbers.length; i++) expect(numbers[i]).toBeGreaterThan(numbers[i - 1]!);
          if (complete) expect(ids(delivered)).toEqual(fromFirstDelivered(log, delivered));
        },
      ),
      { numRuns: propertyRuns(40) },
    );
  });

  it.each(['newest-first', 'oldest-first'] as const)(
    'keeps every trade of a burst up to the documented bound between two polls, whatever page size upstream serves (%s listing)',
    async (order) => {
      await fc.assert(
        fc.asyncProperty(
          fc.nat(1_000),
          fc.array(fc.integer({ min: 0, max: MAX_ACTIVITY_ENTRIES }), { minLength: 1, maxLength: 4 }),
          pageCap,
          async (initial, bursts, cap) => {
            const polls = bursts.map((before) => ({ before, between: [0] }));
            const { log, delivered, complete } = await run(initial, polls, MAX_ACTIVITY_ENTRIES, order, cap);
            expect(ids(delivered)).toEqual(fromFirstDelivered(log, delivered));
            // A walk that read the bound cannot know whether more was left; below it, it knows.
            if (bursts.every((burst) => burst < MAX_ACTIVITY_ENTRIES)) expect(complete).toBe(true);
          },
        ),
        { numRuns: propertyRuns(40) },
      );
    },
  );

  it.each(['newest-first', 'oldest-first'] as const)(
    'a quiet stream over a listing trimmed at its old end delivers every entry once with its quiet memory (%s listing)',
    async (order) => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 120, max: 400 }),
          fc.nat(250),
          fc.array(fc.nat(60), { minLength: 1, maxLength: 12 }),
          pageCap,
          async (logCap, initial, polls, cap) => {
            // Trims come between polls only: oldest first, a trim while a walk pages moves the
            // entries ahead of it to offsets it already read; newest first, the trim may take
            // entries before the walk reaches them.
            const paced = polls.map((before) => ({ before, between: [0] }));
            const { log, delivered } = await run(initial, paced, MAX_ACTIVITY_ENTRIES, order, cap, logCap);
            // Each entry from the first delivered on, once and in order, up to the newest listed.
            const numbers = ids(delivered).map(number);
            for (let i = 1; i < numbers.length; i++) expect(numbers[i]).toBe(numbers[i - 1]! + 1);
            if (numbers.length > 0) expect(numbers.at(-1)).toBe(number(log.entries.at(-1)!.activity_id));
          },
        ),
        { numRuns: propertyRuns(60) },
      );
    },
  );

  it('reads an oldest-first listing from where the last walk ended, stepping back past a trimmed start', async () => {
    const log = new UpstreamLog(150, 'oldest-first');
    log.trade(120);
    const history = new TradeHistory();
    const walk = (firstPoll: boolean) =>
      walkActivity(log.pager([0]), history.seen, { firstPoll, listing: history.listing });
    const first = await walk(true);
    expect(history.listing).toEqual({ order: 'oldest-first', end: 120 });
    history.absorb(first.fresh);
    log.trade(20);
    // From one page before the end: the new entries only, in one request.
    const next = await walk(false);
    expect({ pages: next.pages, fresh: ids(next.fresh) }).toEqual({
      pages: 1,
      fresh: ids(log.entries.slice(-20)),
    });
    history.absorb(next.fresh);
    // 250 more: the log keeps 150, every one of them new; the walk steps back to its start.
    log.trade(250);
    const trimmed = await walk(false);
    expect(ids(trimmed.fresh)).toEqual(ids(log.entries));
    expect(trimmed.complete).toBe(true);
  });

  it('takes entries whose times jitter within the listing, 20 a page; only those newer than the first page wait', async () => {
    // Listed newest first by arrival, times a few ms out of order among neighbours.
    const entries: TradeEntry[] = Array.from({ length: 90 }, (_, i) => ({
      activity_id: `t${i}`,
      activity_type: 'TRADE',
      price: '0.50000000',
      size: '1',
      total_value: '0.5',
      activity_timestamp: new Date(1_700_000_000_000 + i * 10 + (i % 3) * 7).toISOString(),
    }));
    const history = new TradeHistory();
    history.absorb(entries.slice(0, 10));
    const pager = async (offset: number, limit: number): Promise<ActivityPage> => {
      const listed = [...entries].reverse();
      const page = listed.slice(offset, offset + Math.min(limit, 20));
      return { entries: page, hasMore: offset + page.length < listed.length };
    };
    const walk = await walkActivity(pager, history.seen, { firstPoll: false });
    expect(ids(walk.fresh)).toEqual(ids(entries.slice(10)));
    expect(walk.complete).toBe(true);
  });

  it('stops at the first page that reaches an entry already seen', async () => {
    const log = new UpstreamLog(5_000);
    log.trade(1_000);
    const history = new TradeHistory();
    history.absorb((await walkActivity(log.pager([0]), history.seen, { firstPoll: true })).fresh);
    log.trade(150);
    const walk = await walkActivity(log.pager([0]), history.seen, { firstPoll: false });
    expect({ pages: walk.pages, fresh: walk.fresh.length, complete: walk.complete }).toEqual({
      pages: 2,
      fresh: 150,
      complete: true,
    });
  });

  it("a cluster peer taking the lease holder's shared windows delivers what the holder delivers", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.nat(250),
        fc.array(poll, { minLength: 1, maxLength: 8 }),
        fc.nat(7),
        async (initial, polls, joinAt) => {
          const log = new UpstreamLog(5_000);
          log.trade(initial);
          const holder = new TradeHistory();
          const peer = new TradeHistory();
          let holderState: TradesData | undefined;
          let peerState: TradesData | undefined;
          for (const [index, { before, between }] of polls.entries()) {
            log.trade(before);
            const walk = await walkActivity(log.pager(between), holder.seen, { firstPoll: !holder.started });
            const fresh = holder.absorb(walk.fresh);
            holderState = publish(holderState, fresh).state!;
            if (index < joinAt % polls.length) continue;
            const peerPublished = publish(peerState, peer.absorb(sharedWindow(holderState, fresh)));
            if (peerState !== undefined) expect(peerPublished.sent).toEqual(fresh);
            peerState = peerPublished.state;
            expect(peerState).toEqual(holderState);
          }
        },
      ),
      { numRuns: propertyRuns(60) },
    );
  });
});

describe("trades: a stream's memory of the ids it delivered", () => {
  it('stays at its quiet size while polls bring a few trades, and widens by the largest run it takes', () => {
    const log = new UpstreamLog(100_000);
    const history = new TradeHistory();
    for (let poll = 0; poll < 1_000; poll++) {
      log.trade(3);
      history.absorb(log.entries.slice(-3));
    }
    expect(history.seen.size).toBe(TRADE_IDS_REMEMBERED_QUIET + 3);
    log.trade(400);
    history.absorb(log.entries.slice(-400));
    log.trade(2_000);
    for (let start = log.entries.length - 2_000; start < log.entries.length; start += 3)
      history.absorb(log.entries.slice(start, start + 3));
    expect(history.seen.size).toBe(TRADE_IDS_REMEMBERED_QUIET + 400);
  });

  /** A history that took `count` entries, t0 first, in runs of a poll's most. */
  function historyOf(log: UpstreamLog): TradeHistory {
    const history = new TradeHistory();
    for (let start = 0; start < log.entries.length; start += MAX_ACTIVITY_ENTRIES)
      history.absorb(log.entries.slice(start, start + MAX_ACTIVITY_ENTRIES));
    return history;
  }

  it('keeps the newest TRADE_IDS_REMEMBERED ids and forgets older ones', () => {
    const log = new UpstreamLog(100_000);
    log.trade(3 * TRADE_IDS_REMEMBERED);
    const history = historyOf(log);
    expect(history.seen.size).toBe(TRADE_IDS_REMEMBERED);
    const oldestKept = log.entries.length - TRADE_IDS_REMEMBERED;
    expect(history.seen.has(log.entries[oldestKept]!.activity_id)).toBe(true);
    expect(history.seen.has(log.entries[oldestKept - 1]!.activity_id)).toBe(false);
  });

  it('delivers only what is new of a run repeating exactly the bound of what it delivered', () => {
    const log = new UpstreamLog(100_000);
    log.trade(2 * TRADE_IDS_REMEMBERED);
    const history = historyOf(log);
    const repeated = log.entries.slice(-TRADE_IDS_REMEMBERED);
    log.trade(7);
    const fresh = history.absorb([...repeated, ...log.entries.slice(-7)]);
    expect(ids(fresh)).toEqual(ids(log.entries.slice(-7)));
  });

  it('a newest-first walk over a listing a full memory overlaps stops at the newest delivered', async () => {
    const log = new UpstreamLog(100_000);
    log.trade(2 * TRADE_IDS_REMEMBERED);
    const history = historyOf(log);
    // Fewer than the walk's bound, so that it reaches the newest delivered entry.
    const arrived = MAX_ACTIVITY_ENTRIES - 50;
    log.trade(arrived);
    const walk = await walkActivity(log.pager([0]), history.seen, { firstPoll: false });
    expect(walk.complete).toBe(true);
    expect(ids(history.absorb(walk.fresh))).toEqual(ids(log.entries.slice(-arrived)));
    expect(history.seen.size).toBe(TRADE_IDS_REMEMBERED);
  });
});
