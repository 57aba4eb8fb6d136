/**
 * @module sim/market
 * The state of one simulated market, how a trade is recorded in it, and the read-outs every
 * endpoint shares (the quote: best bid, best ask, midpoint, spread), so the order book, batch
 * prices, market data, probabilities and market list all agree with each other.
 */
import type { SimToken } from './catalog.ts';
import type { Fill, SimOrderBook } from './order-book.ts';
import type { Prng } from './prng.ts';

/**
 * Market lifecycle. Upstream shows only ACTIVE (docs/upstream.md); EXPIRED and RESOLVED are this
 * simulator's spellings, matching the `statusFilter` values expired and resolved (docs/upstream.md).
 */
export type MarketStatus = 'ACTIVE' | 'EXPIRED' | 'RESOLVED';

/** An EXPIRED market resolves this long after its expiration. */
export const RESOLUTION_DELAY_MS = 10 * 60_000;

/** Prices in 1e-8 units; 1.00000000 is the whole payout of a share. */
export const ONE = 100_000_000;

export interface SimTrade {
  id: string;
  /** 1e-8 units. */
  price: number;
  /** 1e-6 units. */
  size: number;
  /** The taker's side: BUY lifted an ask, SELL hit a bid. */
  side: 'BUY' | 'SELL';
  at: number;
}

/** A recorded quote for the probability history, in 1e-8 units. */
export interface QuotePoint {
  at: number;
  bid: number;
  ask: number;
}

export interface SimMarket {
  index: number;
  id: string;
  title: string;
  marketName: string;
  question: string;
  token: SimToken;
  exchangeAddress: string;
  oracleAddress: string;
  takerFeeBps: number;
  createdAt: number;
  expiresAt: number;
  status: MarketStatus;
  /** 1e-8 units: 1_000_000 (0.01) or 100_000 (0.001). */
  tickSize: number;
  oneSided: boolean;
  book: SimOrderBook;
  /** 1e-8 units. */
  lastPrice: number;
  /** 1e-8 units, a multiple of tickSize. */
  fair: number;
  /** The fair price when the simulator started; the synthetic history before that ends there. */
  openingFair: number;
  /** Traded notional, exact, in 1e-14 units (size scale + price scale). */
  volume: bigint;
  /** Clock time (ms) of the book's last change; strictly increasing. */
  timestamp: number;
  /** Oldest first, capped. */
  trades: SimTrade[];
  /** Oldest first, capped; quotes recorded while the simulator runs. */
  quotes: QuotePoint[];
  /** Whether ticks move this market's book (tests freeze books to get polls that change nothing). */
  changing: boolean;
  rng: Prng;
  nextOrderNumber: number;
}

/** Best bid, best ask, midpoint and spread, all 1e-8 units; undefined when a side is empty. */
export interface Quote {
  bid: number;
  ask: number;
  midpoint: number;
  spread: number;
}

export function quoteOf(market: SimMarket): Quote | undefined {
  const bid = market.book.best('bids');
  const ask = market.book.best('asks');
  if (bid === undefined || ask === undefined) return undefined;
  // Both are multiples of the tick (an even number of units), so the midpoint is exact.
  return { bid, ask, midpoint: (bid + ask) / 2, spread: ask - bid };
}

/** The YES share's current value: the midpoint, or the last price when there is no two-sided quote. */
export function yesValue(market: SimMarket): number {
  return quoteOf(market)?.midpoint ?? market.lastPrice;
}

/** Most recent trades kept per market (the activity endpoint pages through them). */
export const TRADE_LOG_CAP = 1_000;

/** Records a fill as a trade: the activity log, traded volume and last price follow it. */
export function recordFill(market: SimMarket, fill: Fill, at: number): void {
  market.trades.push({
    id: `${market.id.slice(0, 8)}-t${market.nextOrderNumber++}`,
    price: fill.price,
    size: fill.size,
    side: fill.restingSide === 'asks' ? 'BUY' : 'SELL',
    at,
  });
  if (market.trades.length > TRADE_LOG_CAP) market.trades.shift();
  market.volume += BigInt(fill.size) * BigInt(fill.price);
  market.lastPrice = fill.price;
}
