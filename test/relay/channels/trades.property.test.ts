import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TRADES_SNAPSHOT_SIZE } from '../../../packages/protocol/src/channels/trades/trades.ts';
import type { TradeEntry } from '../../../packages/protocol/src/protocol/messages.ts';
import {
  ACTIVITY_PAGE_SIZE,
  type ActivityPage,
  MAX_ACTIVITY_ENTRIES,
  TRADE_IDS_REMEMBERED,
  TradeHistory,
  walkActivity,
} from '../../../src/relay/channels/trades/relay-activity.ts';
import {
  fromFirstDelivered,
  number,
  pageCap,
  poll,
  run,
  UpstreamLog,
} from '../../support/channels/activity-log.ts';
import { ids } from '../../support/channels/trades-listing.ts';
import { propertyRuns } from '../../support/property-runs.ts';

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
});
