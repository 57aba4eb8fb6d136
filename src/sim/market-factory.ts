/**
 * @module sim/market-factory
 * Draws one market from the seed: its question about a token's price at an expiry, its addresses
 * and fee, a seeded book, and a short trade history before the simulator started. Per-market PRNG
 * streams keep each market independent of the others (removing one does not perturb the rest).
 */
import { type EvolutionContext, evolveBook, seedBook } from './book-evolution.ts';
import { ORACLE_EXPO, type SimToken } from './catalog.ts';
import { ONE, RESOLUTION_DELAY_MS, recordFill, type SimMarket } from './market.ts';
import { SimOrderBook } from './order-book.ts';
import { createPrng, deriveSeed, type Prng, randomUuid } from './prng.ts';

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
const FOUR_WEEKS_MS = 28 * DAY_MS;
const TAKER_FEES_BPS = [0, 10, 20, 25, 50] as const;
export const TICK_CENT = 1_000_000;
export const TICK_MILL = 100_000;

/**
 * Which markets are special in every seed, so tests and demos always meet them: every 4th market
 * (from the 2nd) quotes in 0.001 steps; the 4th of every 25 is quoted on one side only (no price
 * data); the 10th of every 20 starts EXPIRED and the 20th of every 20 starts RESOLVED.
 */
export function marketTraits(index: number): {
  tickSize: number;
  oneSided: boolean;
  initially: 'live' | 'expired' | 'resolved';
} {
  const phase = index % 20;
  return {
    tickSize: index % 4 === 1 ? TICK_MILL : TICK_CENT,
    oneSided: index % 25 === 3,
    initially: phase === 9 ? 'expired' : phase === 19 ? 'resolved' : 'live',
  };
}

export function createMarket(
  seed: number,
  index: number,
  startMs: number,
  tokens: readonly SimToken[],
): SimMarket {
  const rng = createPrng(deriveSeed(seed, 'market', index));
  const traits = marketTraits(index);
  const token = tokens[index % tokens.length]!;
  const id = randomUuid(rng);
  const expiresAt = drawExpiry(rng, startMs, traits.initially);
  const strike = drawStrike(rng, token);
  const expiryLabel = new Date(expiresAt).toISOString().slice(0, 16);
  const tickSize = traits.tickSize;
  const fair = tickSize * rng.int(Math.ceil((0.1 * ONE) / tickSize), Math.floor((0.9 * ONE) / tickSize));
  const market: SimMarket = {
    index,
    id,
    title: `Will ${token.symbol} be above $${strike} at ${expiryLabel} UTC?`,
    marketName: `${token.symbol}-ABOVE-${strike}-${expiryLabel.replace(/[-:T]/g, '')}`,
    question:
      `Will the oracle price of ${token.name} (${token.symbol}) be strictly above $${strike} at ` +
      `${expiryLabel} UTC? Resolves YES if so, NO otherwise.`,
    token,
    exchangeAddress: `0x${rng.hex(40)}`,
    oracleAddress: `0x${rng.hex(40)}`,
    takerFeeBps: rng.pick(TAKER_FEES_BPS),
    createdAt: Math.min(startMs, expiresAt) - rng.int(1, 45) * DAY_MS - rng.int(0, DAY_MS - 1),
    expiresAt,
    status: traits.initially === 'live' ? 'ACTIVE' : traits.initially === 'expired' ? 'EXPIRED' : 'RESOLVED',
    tickSize,
    oneSided: traits.oneSided,
    book: new SimOrderBook(),
    lastPrice: fair,
    fair,
    openingFair: fair,
    volume: 0n,
    timestamp: startMs,
    trades: [],
    quotes: [],
    changing: true,
    rng,
    nextOrderNumber: 1,
  };
  seedBook(market.book, evolutionContext(market));
  seedPastTrades(market, Math.min(startMs, expiresAt));
  if (market.status === 'RESOLVED') resolve(market);
  return market;
}

export function evolutionContext(market: SimMarket): EvolutionContext {
  const prefix = market.id.slice(0, 8);
  return {
    rng: market.rng,
    tickSize: market.tickSize,
    fair: market.fair,
    oneSided: market.oneSided,
    nextOrderId: () => `${prefix}-${market.nextOrderNumber++}`,
  };
}

/** Settles the market: no more orders, last price at the payout of YES (1) or NO (0). */
export function resolve(market: SimMarket): void {
  market.book.clear();
  market.lastPrice = market.fair >= ONE / 2 ? ONE : 0;
}

/** Live markets expire from 5 minutes to 4 weeks ahead (log-uniform, so some expire during a demo). */
function drawExpiry(rng: Prng, startMs: number, initially: 'live' | 'expired' | 'resolved'): number {
  if (initially === 'expired') return startMs - rng.int(1, RESOLUTION_DELAY_MS / MINUTE_MS - 2) * MINUTE_MS;
  if (initially === 'resolved') return startMs - rng.int(1, 30) * DAY_MS;
  const span = Math.exp(Math.log(5 * MINUTE_MS) + rng.next() * Math.log(FOUR_WEEKS_MS / (5 * MINUTE_MS)));
  return Math.ceil((startMs + span) / MINUTE_MS) * MINUTE_MS;
}

/** A round strike within 10% of the token's oracle price. */
function drawStrike(rng: Prng, token: SimToken): string {
  const oracle = Number(token.rawPrice) * 10 ** ORACLE_EXPO;
  const raw = oracle * (0.9 + rng.next() * 0.2);
  const magnitude = 10 ** Math.max(-2, Math.floor(Math.log10(raw)) - 2);
  const rounded = Math.round(raw / magnitude) * magnitude;
  return magnitude < 1 ? rounded.toFixed(-Math.log10(magnitude)) : String(rounded);
}

/**
 * Trades made before the simulator started, so activity, volume and last price are not empty on
 * the first request: real book steps, stamped at past times.
 */
function seedPastTrades(market: SimMarket, endMs: number): void {
  if (market.oneSided) return;
  const context = evolutionContext(market);
  const count = market.rng.int(20, 40);
  let at = endMs - count * market.rng.int(1, 20) * MINUTE_MS;
  for (let step = 0; market.trades.length < count && step < count * 20; step++) {
    for (const fill of evolveBook(market.book, context)) {
      at = Math.min(at + market.rng.int(10_000, 20 * MINUTE_MS), endMs - 1);
      recordFill(market, fill, at);
    }
  }
}
