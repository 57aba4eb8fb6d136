/**
 * @module sim/trade-flow
 * Trades printed beside the book's own fills, so a market's activity feed moves at a chosen rate
 * and, in bursts, faster than one page of `/api/markets/:id/activity` per poll (what makes a
 * consumer page with `hasMore`). A print trades at the touch of a random side and leaves the book
 * as it is, as if a crossing buyer and seller met inside one instant; last price and volume follow
 * it like any fill. Deterministic for a seed and a clock: each market draws from its own stream.
 */
import { randomSize } from './book-evolution.ts';
import { recordFill, type SimMarket } from './market.ts';
import type { BookSide } from './order-book.ts';
import type { Prng } from './prng.ts';

export interface TradeFlow {
  /** Steady prints per second. */
  perSecond: number;
  /** How often a burst comes, on average. */
  burstsPerMinute: number;
  /** Prints in one burst, all at once. */
  burstSize: number;
}

/**
 * By default the first market is hot: a few prints a second and, about twice a minute, a burst of
 * 150 (more than one activity page); the others trade only through their books' fills.
 */
export function defaultTradeFlow(index: number): TradeFlow | undefined {
  return index === 0 ? { perSecond: 3, burstsPerMinute: 2, burstSize: 150 } : undefined;
}

/** How many prints `flow` makes over `elapsedS` seconds; the fractional part is drawn. */
export function printsDue(flow: TradeFlow, rng: Prng, elapsedS: number): number {
  const steady = flow.perSecond * elapsedS;
  let count = Math.floor(steady) + (rng.chance(steady - Math.floor(steady)) ? 1 : 0);
  if (rng.chance(-Math.expm1(-(flow.burstsPerMinute / 60) * elapsedS))) count += flow.burstSize;
  return count;
}

/** Prints `count` trades at the touch at time `at`; none in a market without a two-sided quote. */
export function printTrades(market: SimMarket, rng: Prng, count: number, at: number): number {
  let printed = 0;
  for (let n = 0; n < count; n++) {
    const restingSide: BookSide = rng.chance(0.5) ? 'bids' : 'asks';
    const price = market.book.best(restingSide);
    if (price === undefined || market.book.best(restingSide === 'bids' ? 'asks' : 'bids') === undefined)
      return printed;
    recordFill(market, { price, size: randomSize(rng), restingSide }, at);
    printed++;
  }
  return printed;
}
