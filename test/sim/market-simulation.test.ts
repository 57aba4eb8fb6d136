/**
 * @module test/sim/market-simulation
 * The pure simulation: determinism from seed and clock, book invariants over many ticks, every
 * active book changing on every tick, freezing, removal, and the market lifecycle.
 */
import { describe, expect, it } from 'vitest';
import { RESOLUTION_DELAY_MS } from '../../src/sim/market.ts';
import { MarketSimulation, skewedActivity } from '../../src/sim/market-simulation.ts';
import { orderBook } from '../../src/upstream/schemas.ts';

const START = Date.UTC(2025, 0, 6, 12, 0, 0);

function fakeClock(start = START): { now: () => number; advance: (ms: number) => void } {
  let time = start;
  return {
    now: () => time,
    advance: (ms) => {
      time += ms;
    },
  };
}

/** Exact comparison of two 8-decimal prices (same width after the point). */
function comparePrices(a: string, b: string): number {
  const [aWhole, aFraction] = a.split('.') as [string, string];
  const [bWhole, bFraction] = b.split('.') as [string, string];
  const left = BigInt(aWhole + aFraction);
  const right = BigInt(bWhole + bFraction);
  return left < right ? -1 : left > right ? 1 : 0;
}

describe('MarketSimulation', () => {
  it('is deterministic: same seed and clock give identical books after N ticks', () => {
    const clockA = fakeClock();
    const clockB = fakeClock();
    const a = new MarketSimulation({ markets: 12, seed: 42, now: clockA.now });
    const b = new MarketSimulation({ markets: 12, seed: 42, now: clockB.now });
    for (let n = 0; n < 200; n++) {
      clockA.advance(250);
      clockB.advance(250);
      a.tick();
      b.tick();
    }
    expect(b.marketIds()).toEqual(a.marketIds());
    for (const id of a.marketIds()) expect(b.orderBook(id)).toEqual(a.orderBook(id));
  });

  it('differs for another seed', () => {
    const a = new MarketSimulation({ markets: 3, seed: 1, now: fakeClock().now });
    const b = new MarketSimulation({ markets: 3, seed: 2, now: fakeClock().now });
    expect(b.marketIds()).not.toEqual(a.marketIds());
  });

  it('keeps book invariants over many ticks, and changes every active book on every tick', () => {
    const clock = fakeClock();
    const sim = new MarketSimulation({ markets: 12, seed: 3, now: clock.now });
    const lastTimestamps = new Map<string, string>();
    const problems: string[] = [];
    let multiOrderLevelSeen = false;
    let finePriceSeen = false;
    let dustSeen = false;
    for (let n = 0; n < 200; n++) {
      // Every third tick the clock stands still: timestamps must still strictly increase.
      if (n % 3 !== 0) clock.advance(100);
      const before = new Map(sim.activeMarketIds().map((id) => [id, JSON.stringify(sim.orderBook(id))]));
      sim.tick();
      for (const [id, previous] of before) {
        if (sim.market(id)?.status === 'ACTIVE' && JSON.stringify(sim.orderBook(id)) === previous) {
          problems.push(`tick ${n}: ${id} did not change`);
        }
      }
      for (const id of sim.marketIds()) {
        const book = sim.orderBook(id)!;
        if (n % 20 === 0) orderBook.parse(book);
        const bestBid = book.bids[0]?.price;
        const bestAsk = book.asks[0]?.price;
        if (bestBid && bestAsk && comparePrices(bestBid, bestAsk) !== -1) problems.push(`${id} crossed`);
        for (const side of [book.bids, book.asks]) {
          for (const [index, entry] of side.entries()) {
            if (!/^0\.\d{8}$/.test(entry.price)) problems.push(`price ${entry.price}`);
            if (!/^\d+(\.\d*[1-9])?$/.test(entry.size) || /^0(\.0+)?$/.test(entry.size)) {
              problems.push(`size ${entry.size}`);
            }
            if (entry.size === '0.000001') dustSeen = true;
            if (/^0\.\d\d[1-9]0{5}$/.test(entry.price)) finePriceSeen = true;
            if (index === 0) continue;
            // Best first: bids descending, asks ascending; equal neighbours share a level.
            const order = comparePrices(side[index - 1]!.price, entry.price);
            if (order === 0) multiOrderLevelSeen = true;
            else if (order !== (side === book.bids ? 1 : -1)) problems.push(`${id} unsorted`);
          }
          if (new Set(side.map((entry) => entry.price)).size > 60)
            problems.push(`${id} deeper than 60 levels`);
        }
        const previous = lastTimestamps.get(id);
        if (previous !== undefined && previous !== book.timestamp && book.timestamp <= previous) {
          problems.push(`${id} timestamp went from ${previous} to ${book.timestamp}`);
        }
        lastTimestamps.set(id, book.timestamp);
      }
    }
    expect(problems).toEqual([]);
    expect(multiOrderLevelSeen).toBe(true);
    expect(finePriceSeen).toBe(true);
    expect(dustSeen).toBe(true);
  });

  it('has order ids unique across books', () => {
    const sim = new MarketSimulation({ markets: 10, seed: 5, now: fakeClock().now });
    for (let n = 0; n < 20; n++) sim.tick();
    const ids = sim.marketIds().flatMap((id) => {
      const book = sim.orderBook(id)!;
      return [...book.bids, ...book.asks].map((entry) => entry.id);
    });
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('stamps a change with the clock, or last + 1 ms when the clock has not moved', () => {
    const clock = fakeClock();
    const sim = new MarketSimulation({ markets: 1, seed: 1, now: clock.now });
    const id = sim.marketIds()[0]!;
    clock.advance(1_000);
    sim.tick();
    expect(sim.orderBook(id)!.timestamp).toBe(new Date(START + 1_000).toISOString());
    sim.tick();
    expect(sim.orderBook(id)!.timestamp).toBe(new Date(START + 1_001).toISOString());
  });

  it('freezes books (all, or one market) so ticks change nothing', () => {
    const clock = fakeClock();
    const sim = new MarketSimulation({ markets: 3, seed: 1, now: clock.now });
    const [first, second] = sim.marketIds() as [string, string];
    sim.setBookChanging(false);
    const frozen = sim.orderBook(first);
    clock.advance(500);
    sim.tick();
    expect(sim.orderBook(first)).toEqual(frozen);
    sim.setBookChanging(true);
    sim.setBookChanging(false, first);
    const secondBefore = sim.orderBook(second);
    sim.tick();
    expect(sim.orderBook(first)).toEqual(frozen);
    expect(sim.orderBook(second)).not.toEqual(secondBefore);
  });

  it('removes a market from every view', () => {
    const sim = new MarketSimulation({ markets: 3, seed: 1, now: fakeClock().now });
    const id = sim.marketIds()[1]!;
    sim.removeMarket(id);
    expect(sim.marketIds()).not.toContain(id);
    expect(sim.orderBook(id)).toBeUndefined();
    expect(() => sim.tick()).not.toThrow();
  });

  it('has, in the default seed, a market without price data and markets in every status', () => {
    const sim = new MarketSimulation({ now: fakeClock().now });
    expect(sim.marketIds()).toHaveLength(50);
    expect(sim.marketIdsWithoutPriceData().length).toBeGreaterThan(0);
    const statuses = new Set(sim.markets().map((market) => market.status));
    expect([...statuses].sort()).toEqual(['ACTIVE', 'EXPIRED', 'RESOLVED']);
  });

  it('moves a market ACTIVE -> EXPIRED at expiry (book frozen) -> RESOLVED later (book emptied)', () => {
    const clock = fakeClock();
    // No trade flow: the clock jumps to the expiry, days away, and the steady prints of those days
    // in one tick would be most of this test's time and none of its subject.
    const sim = new MarketSimulation({ markets: 1, seed: 9, now: clock.now, tradeFlow: () => undefined });
    const market = sim.markets()[0]!;
    expect(market.status).toBe('ACTIVE');
    expect(market.expiresAt - START).toBeGreaterThanOrEqual(5 * 60_000);
    clock.advance(market.expiresAt - START);
    sim.tick();
    expect(market.status).toBe('EXPIRED');
    const expiredBook = sim.orderBook(market.id);
    sim.tick();
    expect(sim.orderBook(market.id)).toEqual(expiredBook);
    clock.advance(RESOLUTION_DELAY_MS);
    sim.tick();
    expect(market.status).toBe('RESOLVED');
    const resolved = sim.orderBook(market.id)!;
    expect(resolved.bids).toEqual([]);
    expect(resolved.asks).toEqual([]);
    expect(['0.00000000', '1.00000000']).toContain(resolved.last_price);
    expect(Date.parse(resolved.timestamp)).toBeGreaterThan(Date.parse(expiredBook!.timestamp));
  });

  it('expires markets at the configured pace, soonest first, and resolves them after the delay', () => {
    const run = () => {
      const clock = fakeClock();
      const sim = new MarketSimulation({
        markets: 20,
        seed: 3,
        now: clock.now,
        lifecycle: { expireEveryMs: 1_000, resolutionDelayMs: 2_000 },
      });
      const soonest = sim
        .markets()
        .filter((market) => market.status === 'ACTIVE')
        .sort((a, b) => a.expiresAt - b.expiresAt)
        .slice(0, 3)
        .map((market) => market.id);
      const statuses: string[][] = [];
      for (let second = 1; second <= 5; second++) {
        clock.advance(1_000);
        sim.tick();
        statuses.push(soonest.map((id) => sim.market(id)!.status));
      }
      return { soonest, statuses, sim };
    };
    const { statuses, sim } = run();
    expect(statuses[0]).toEqual(['EXPIRED', 'ACTIVE', 'ACTIVE']);
    expect(statuses[1]).toEqual(['EXPIRED', 'EXPIRED', 'ACTIVE']);
    expect(statuses[2]).toEqual(['RESOLVED', 'EXPIRED', 'EXPIRED']);
    expect(statuses[4]).toEqual(['RESOLVED', 'RESOLVED', 'RESOLVED']);
    // Deterministic for a seed and a clock.
    expect(run().statuses).toEqual(statuses);
    sim.setLifecycle({ expireEveryMs: 0 });
    expect(sim.lifecycle()).toEqual({ expireEveryMs: 0, resolutionDelayMs: 2_000 });
    expect(() => sim.setLifecycle({ resolutionDelayMs: -1 })).toThrow(RangeError);
  });

  it('settles one market at once, never backwards', () => {
    const clock = fakeClock();
    const sim = new MarketSimulation({ markets: 1, seed: 9, now: clock.now });
    const market = sim.markets()[0]!;
    sim.settle(market.id, 'EXPIRED');
    expect(market.status).toBe('EXPIRED');
    expect(market.expiresAt).toBe(START);
    sim.settle(market.id, 'RESOLVED');
    expect(market.status).toBe('RESOLVED');
    expect(sim.orderBook(market.id)!.bids).toEqual([]);
    sim.settle(market.id, 'EXPIRED');
    expect(market.status).toBe('RESOLVED');
  });

  it('spreads expirations from minutes to weeks ahead', () => {
    const sim = new MarketSimulation({ markets: 200, seed: 4, now: fakeClock().now });
    const ahead = sim
      .markets()
      .filter((market) => market.status === 'ACTIVE')
      .map((market) => market.expiresAt - START);
    expect(Math.min(...ahead)).toBeLessThan(6 * 3_600_000);
    expect(Math.max(...ahead)).toBeGreaterThan(7 * 86_400_000);
  });

  it('moves books at the rates of an activity profile and says when each changed', () => {
    const clock = fakeClock();
    const changes: { market: string; at: number }[] = [];
    const sim = new MarketSimulation({
      markets: 20,
      seed: 9,
      now: clock.now,
      activity: skewedActivity(2, 4, 1 / 60),
      onChange: (market, at) => changes.push({ market, at }),
    });
    const [hot, , ...quiet] = sim.marketIds() as [string, string, ...string[]];
    for (let i = 0; i < 600; i++) {
      clock.advance(100);
      sim.tick();
    }
    // 60 s: a hot market moves about 4 times a second, a quiet one about once.
    const count = (market: string) => changes.filter((change) => change.market === market).length;
    expect(count(hot)).toBeGreaterThan(150);
    const quietChanges = quiet.reduce((sum, market) => sum + count(market), 0) / quiet.length;
    expect(quietChanges).toBeLessThan(3);
    // The last change reported is the book's timestamp.
    const last = changes.findLast((change) => change.market === hot)!;
    expect(sim.orderBook(hot)!.timestamp).toBe(new Date(last.at).toISOString());
  });
});
