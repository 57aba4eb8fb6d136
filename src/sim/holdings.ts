/**
 * @module sim/holdings
 * Who holds which outcome of which market, drawn once from the seed. One table serves both the
 * market holder leaderboards and the users' positions, stats and activity, so they agree.
 */
import type { SimUser } from './catalog.ts';
import { ONE, type SimMarket } from './market.ts';
import { createPrng, deriveSeed } from './prng.ts';

export type Outcome = 'YES' | 'NO';

export interface Holding {
  user: SimUser;
  market: SimMarket;
  outcome: Outcome;
  /** Shares in 1e-6 units. */
  quantity: number;
  /** Average entry price in 1e-8 units (a whole cent). */
  avgPrice: number;
  /** When the position was opened (ms). */
  openedAt: number;
}

const CENT = 1_000_000;

export function buildHoldings(
  seed: number,
  users: readonly SimUser[],
  markets: readonly SimMarket[],
): Holding[] {
  if (markets.length === 0) return [];
  const holdings: Holding[] = [];
  for (const user of users) {
    const rng = createPrng(deriveSeed(seed, 'holdings', user.index));
    const count = Math.min(markets.length, rng.int(4, 12));
    const chosen = new Set<number>();
    while (chosen.size < count) chosen.add(rng.int(0, markets.length - 1));
    for (const marketIndex of [...chosen].sort((a, b) => a - b)) {
      const market = markets[marketIndex]!;
      const outcome: Outcome = rng.chance(0.5) ? 'YES' : 'NO';
      const yesEntry = Math.min(99, Math.max(1, Math.round(market.fair / CENT) + rng.int(-10, 10)));
      holdings.push({
        user,
        market,
        outcome,
        quantity: rng.chance(0.5) ? rng.int(1, 5_000) * 1_000_000 : rng.int(1, 500_000) * 10_000,
        avgPrice: (outcome === 'YES' ? yesEntry : 100 - yesEntry) * CENT,
        openedAt: Math.max(market.createdAt, user.createdAt) + rng.int(0, 3_600_000),
      });
    }
  }
  return holdings;
}

/** The current value of one share of `outcome` given the YES value (1e-8 units). */
export function outcomeValue(outcome: Outcome, yesValue: number): number {
  return outcome === 'YES' ? yesValue : ONE - yesValue;
}
