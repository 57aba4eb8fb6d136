/**
 * @module test/sim/trade-flow
 * The activity feed moves: trades printed beside the books, steadily and in bursts of more than
 * one activity page, deterministic for a seed and a clock; and orders that stay in a book keep
 * their id from tick to tick (what the `orders` channel diffs by).
 */
import { describe, expect, it } from 'vitest';
import { compareDecimals } from '../../packages/protocol/src/protocol/decimal.ts';
import { ACTIVITY_LIMIT } from '../../src/sim/api/markets.ts';
import { MarketSimulation } from '../../src/sim/market-simulation.ts';
import { startSimulator } from '../../src/sim/server.ts';
import { marketActivityResponse } from '../../src/upstream/schemas.ts';

const START = Date.UTC(2025, 0, 6, 12, 0, 0);

function clockedSim(seed: number, tradeFlow?: ConstructorParameters<typeof MarketSimulation>[0]) {
  let time = START;
  const sim = new MarketSimulation({ markets: 4, seed, now: () => time, ...tradeFlow });
  return { sim, advance: (ms: number) => (time += ms) };
}

const tradeIds = (sim: MarketSimulation, market: string): string[] =>
  sim.market(market)!.trades.map((trade) => trade.id);

describe('simulated trade flow', () => {
  it('the hot market bursts past one activity page between two polls a second apart, the same for the same seed', () => {
    const runs = [clockedSim(5), clockedSim(5)];
    const hot = runs[0]!.sim.marketIds()[0]!;
    let widest = 0;
    for (let second = 0; second < 120; second++) {
      const before = runs[0]!.sim.market(hot)!.trades.length;
      for (const run of runs) {
        for (let tick = 0; tick < 4; tick++) {
          run.advance(250);
          run.sim.tick();
        }
      }
      widest = Math.max(widest, runs[0]!.sim.market(hot)!.trades.length - before);
    }
    expect(tradeIds(runs[1]!.sim, hot)).toEqual(tradeIds(runs[0]!.sim, hot));
    expect(widest).toBeGreaterThan(ACTIVITY_LIMIT.max);
  });

  it('prints no trade in a frozen market, and a burst on demand in an active one', () => {
    const { sim, advance } = clockedSim(6, {
      tradeFlow: () => ({ perSecond: 50, burstsPerMinute: 0, burstSize: 0 }),
    });
    const [market] = sim.marketIds() as [string];
    sim.setBookChanging(false, market);
    const before = tradeIds(sim, market);
    advance(1_000);
    sim.tick();
    expect(tradeIds(sim, market)).toEqual(before);
    expect(sim.printTrades(market, 230)).toBe(230);
    expect(sim.market(market)!.trades.length - before.length).toBe(230);
  });

  it('serves a burst newest first across activity pages, each entry once', async () => {
    const sim = await startSimulator({ markets: 2, seed: 9, tickMs: 0, tradeFlow: () => undefined });
    try {
      const [market] = sim.market.marketIds() as [string];
      sim.market.printTrades(market, 250);
      const seen: string[] = [];
      for (let offset = 0, hasMore = true; hasMore; offset += ACTIVITY_LIMIT.max) {
        const response = await fetch(`${sim.url}/api/markets/${market}/activity?limit=100&offset=${offset}`);
        const page = marketActivityResponse.parse(await response.json());
        seen.push(...page.activity.map((entry) => entry.activity_id));
        hasMore = page.pagination.hasMore;
      }
      expect(new Set(seen).size).toBe(seen.length);
      expect(seen.slice().reverse()).toEqual(tradeIds(sim.market, market).slice(-seen.length));
      expect(seen.length).toBeGreaterThanOrEqual(250);
    } finally {
      await sim.close();
    }
  });

  it('keeps the id of every order that stays in the book from tick to tick', () => {
    const { sim, advance } = clockedSim(7);
    const [market] = sim.marketIds() as [string];
    let previous = sim.orderBook(market)!;
    let kept = 0;
    for (let tick = 0; tick < 50; tick++) {
      advance(250);
      sim.tick();
      const next = sim.orderBook(market)!;
      for (const side of ['bids', 'asks'] as const) {
        const before = new Map(previous[side].map((order) => [order.id, order]));
        for (const order of next[side]) {
          const old = before.get(order.id);
          if (old === undefined) continue;
          kept++;
          // A resting order keeps its price; only a partial fill shrinks it.
          expect(order.price).toBe(old.price);
          expect(compareDecimals(order.size, old.size)).toBeLessThanOrEqual(0);
        }
      }
      previous = next;
    }
    expect(kept).toBeGreaterThan(50 * 100);
  });
});
