import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { TradesData } from '../../../packages/protocol/src/protocol/messages.ts';
import {
  MAX_ACTIVITY_ENTRIES,
  sharedWindow,
  TRADE_IDS_REMEMBERED,
  TRADE_IDS_REMEMBERED_QUIET,
  TradeHistory,
  walkActivity,
} from '../../../src/relay/channels/trades/relay-activity.ts';
import { poll, publish, UpstreamLog } from '../../support/channels/activity-log.ts';
import { ids } from '../../support/channels/trades-listing.ts';
import { propertyRuns } from '../../support/property-runs.ts';

describe('trades: a cluster peer following the lease holder', () => {
  it.each(['newest-first', 'oldest-first'] as const)(
    "a cluster peer that followed the holder's shares, then took the lease, delivers only the trades after those (%s listing)",
    async (order) => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 0, max: 1_500 }),
          fc.array(fc.nat(60), { minLength: 1, maxLength: 6 }),
          fc.nat(60),
          async (initial, polls, afterTakeover) => {
            const log = new UpstreamLog(100_000, order);
            log.trade(initial);
            const holder = new TradeHistory();
            const peer = new TradeHistory();
            let holderState: TradesData | undefined;
            let peerState: TradesData | undefined;
            for (const before of [0, ...polls]) {
              log.trade(before);
              const walk = await walkActivity(log.pager([0]), holder.seen, {
                firstPoll: !holder.started,
                listing: holder.listing,
              });
              const fresh = holder.absorb(walk.fresh);
              holderState = publish(holderState, fresh).state!;
              peerState = publish(peerState, peer.absorb(sharedWindow(holderState, fresh))).state;
            }
            // The holder is gone; the peer polls itself, with no memory of the listing's shape.
            log.trade(afterTakeover);
            const walk = await walkActivity(log.pager([0]), peer.seen, {
              firstPoll: !peer.started,
              listing: peer.listing,
            });
            expect(ids(publish(peerState, peer.absorb(walk.fresh)).sent)).toEqual(
              ids(log.entries.slice(log.entries.length - afterTakeover)),
            );
          },
        ),
        { numRuns: propertyRuns(40) },
      );
    },
  );

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
