/**
 * @module sim/user-ledger
 * What a user holds and did, read from the holdings table and the markets' current state: open and
 * closed positions with exact current values, the trades that opened them, and the stats built
 * from both (docs/upstream.md, "Position", "User activity entry", "User stats").
 */
import type { Position, UserActivityEntry, UserStats } from '../upstream/account-schemas.ts';
import type { SimUser } from './catalog.ts';
import {
  formatFixed,
  formatPrice,
  formatTrimmed,
  NOTIONAL_SCALE,
  rescale,
  SIZE_SCALE,
} from './fixed-point.ts';
import { type Holding, outcomeValue } from './holdings.ts';
import { ONE, yesValue } from './market.ts';
import type { MarketSimulation } from './market-simulation.ts';
import { createPrng, deriveSeed } from './prng.ts';
import { isoTime } from './snapshots.ts';

/** A user's holdings in markets that still exist; closed ones (market no longer ACTIVE) on request. */
export function holdingsOf(sim: MarketSimulation, user: SimUser, includeClosed: boolean): Holding[] {
  return sim.holdings.filter(
    (holding) =>
      holding.user === user &&
      sim.market(holding.market.id) !== undefined &&
      (includeClosed || holding.market.status === 'ACTIVE'),
  );
}

/** Exact value of a holding now, in NOTIONAL_SCALE units. */
export function currentValue(holding: Holding): bigint {
  return BigInt(holding.quantity) * BigInt(outcomeValue(holding.outcome, yesValue(holding.market)));
}

export function positionOf(holding: Holding): Position {
  return {
    market_id: holding.market.id,
    market_title: holding.market.title,
    outcome: holding.outcome,
    quantity: formatTrimmed(BigInt(holding.quantity), SIZE_SCALE),
    avg_price: formatPrice(BigInt(holding.avgPrice)),
    current_value: formatTrimmed(currentValue(holding), NOTIONAL_SCALE),
  };
}

export interface LedgerTrade {
  holding: Holding;
  id: string;
  /** 1e-6 units. */
  size: number;
  at: number;
}

/** The 1-3 buys that built each holding at its average price, newest first. */
export function tradesOf(sim: MarketSimulation, user: SimUser): LedgerTrade[] {
  const trades: LedgerTrade[] = [];
  for (const holding of holdingsOf(sim, user, true)) {
    const rng = createPrng(deriveSeed(sim.seed, 'ledger', user.index, holding.market.index));
    const parts = rng.int(1, 3);
    let left = holding.quantity;
    for (let part = 1; part <= parts; part++) {
      const size = part === parts ? left : Math.max(1, Math.floor(left / 2 / 10_000) * 10_000);
      if (size <= 0) break;
      left -= size;
      trades.push({
        holding,
        id: `${user.userId.slice(0, 8)}-${holding.market.index}-${part}`,
        size,
        at: holding.openedAt + (part - 1) * rng.int(60_000, 86_400_000),
      });
    }
  }
  return trades.sort((a, b) => b.at - a.at || a.id.localeCompare(b.id));
}

export function activityEntryOf(trade: LedgerTrade): UserActivityEntry {
  return {
    activity_id: trade.id,
    activity_type: 'TRADE',
    market_id: trade.holding.market.id,
    market_title: trade.holding.market.title,
    side: 'BUY',
    price: formatPrice(BigInt(trade.holding.avgPrice)),
    size: formatTrimmed(BigInt(trade.size), SIZE_SCALE),
    activity_timestamp: isoTime(trade.at),
  };
}

/** Exact traded notional of trades, in NOTIONAL_SCALE units. */
export function tradedNotional(trades: readonly LedgerTrade[]): bigint {
  return trades.reduce((sum, trade) => sum + BigInt(trade.size) * BigInt(trade.holding.avgPrice), 0n);
}

export function statsOf(sim: MarketSimulation, user: SimUser): UserStats {
  const all = holdingsOf(sim, user, true);
  const resolved = all.filter((holding) => holding.market.status === 'RESOLVED');
  const wins = resolved.filter((holding) => outcomeValue(holding.outcome, holding.market.lastPrice) === ONE);
  const winRate = resolved.length === 0 ? 0n : (BigInt(wins.length) * 10_000n) / BigInt(resolved.length);
  return {
    total_volume_usd: formatFixed(rescale(tradedNotional(tradesOf(sim, user)), NOTIONAL_SCALE, 2), 2),
    markets_traded: new Set(all.map((holding) => holding.market.id)).size,
    positions_count: all.filter((holding) => holding.market.status === 'ACTIVE').length,
    win_rate: formatFixed(winRate, 2),
  };
}
