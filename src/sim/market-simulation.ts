/**
 * @module sim/market-simulation
 * The simulator's whole in-memory state: markets with live order books, tokens with oracle prices,
 * users and their holdings. Pure state, no I/O; deterministic for a seed and a clock. Nothing moves
 * between ticks: `tick()` advances every market one step, the server calls it on a timer.
 */

import type { OrderBook } from '../upstream/schemas.ts';
import { evolveBook } from './book-evolution.ts';
import { buildTokens, buildUsers, moveOraclePrice, type SimToken, type SimUser } from './catalog.ts';
import { buildHoldings, type Holding } from './holdings.ts';
import { quoteOf, RESOLUTION_DELAY_MS, recordFill, type SimMarket } from './market.ts';
import { createMarket, evolutionContext, marketTraits, resolve } from './market-factory.ts';
import { createPrng, deriveSeed, type Prng } from './prng.ts';
import { orderBookOf } from './snapshots.ts';
import { defaultTradeFlow, printsDue, printTrades, type TradeFlow } from './trade-flow.ts';

export interface MarketSimulationOptions {
  /** Number of markets (default 50). */
  markets?: number;
  /** Seed of every random draw (default 1). */
  seed?: number;
  /** Clock in ms (default Date.now). */
  now?: () => number;
  /**
   * How often each market's book changes, in changes per second by market index; by default every
   * book moves on every tick. A skewed profile (a few hot markets, most changing about once a
   * minute) is what the freshness benchmark polls.
   */
  activity?: (index: number) => number;
  /** Told the market and the (simulator clock) time of every book change. */
  onChange?: (marketId: string, at: number) => void;
  /**
   * Trades printed beside the books' fills, by market index (sim/trade-flow.ts); by default the
   * first market prints steadily and in bursts of more than one activity page.
   */
  tradeFlow?: (index: number) => TradeFlow | undefined;
  /** How fast markets expire and resolve (default: each at its own expiry, resolved 10 minutes later). */
  lifecycle?: Partial<LifecyclePace>;
}

/**
 * The pace of the market lifecycle (docs/upstream.md "Market status and lifecycle"): besides each
 * market expiring at its own expiration time, one more every `expireEveryMs` of clock.
 */
export interface LifecyclePace {
  /** Every this many ms the ACTIVE market expiring soonest expires now; 0 = only at their own expiry. */
  expireEveryMs: number;
  /** An EXPIRED market resolves this long after its expiry. */
  resolutionDelayMs: number;
}

export type SettledStatus = 'EXPIRED' | 'RESOLVED';

/** A few hot markets changing several times a second; the rest about once a minute. */
export function skewedActivity(hotMarkets: number, hotPerSecond = 4, quietPerSecond = 1 / 60) {
  return (index: number): number => (index < hotMarkets ? hotPerSecond : quietPerSecond);
}

/** Quotes kept per market for the probability history, at most one per second of clock. */
const QUOTE_CAP = 5_000;
const QUOTE_SPACING_MS = 1_000;

export class MarketSimulation {
  readonly seed: number;
  readonly startedAt: number;
  readonly tokens: readonly SimToken[];
  readonly users: readonly SimUser[];
  readonly holdings: readonly Holding[];
  private readonly clock: () => number;
  private readonly live = new Map<string, SimMarket>();
  private readonly oracleRng: Prng;
  private booksChanging = true;
  private readonly activity: ((index: number) => number) | undefined;
  private readonly onChange: ((marketId: string, at: number) => void) | undefined;
  /** Each market's printed trades (sim/trade-flow.ts): their own draws, so prints leave the book's alone. */
  private readonly tape = new Map<string, { flow: TradeFlow | undefined; rng: Prng }>();
  private lastTickAt: number;
  private pace: LifecyclePace;
  /** Clock time of the last expiry brought forward by the pace. */
  private lastPacedExpiryAt: number;
  private readonly tradeFlow: (index: number) => TradeFlow | undefined;
  /** The index the next market created gets (each index is its own deterministic market). */
  private nextIndex: number;

  constructor(options: MarketSimulationOptions = {}) {
    const count = options.markets ?? 50;
    if (!Number.isInteger(count) || count < 0) throw new RangeError('markets must be a non-negative integer');
    this.seed = options.seed ?? 1;
    this.clock = options.now ?? Date.now;
    this.startedAt = this.clock();
    this.lastTickAt = this.startedAt;
    this.pace = checkedPace({
      expireEveryMs: 0,
      resolutionDelayMs: RESOLUTION_DELAY_MS,
      ...options.lifecycle,
    });
    this.lastPacedExpiryAt = this.startedAt;
    this.activity = options.activity;
    this.onChange = options.onChange;
    this.tokens = buildTokens(this.seed, this.startedAt);
    this.users = buildUsers(this.seed, this.startedAt);
    const markets: SimMarket[] = [];
    for (let index = 0; index < count; index++) {
      markets.push(createMarket(this.seed, index, this.startedAt, this.tokens));
    }
    this.tradeFlow = options.tradeFlow ?? defaultTradeFlow;
    this.nextIndex = count;
    for (const market of markets) this.admit(market);
    this.holdings = buildHoldings(this.seed, this.users, markets);
    this.oracleRng = createPrng(deriveSeed(this.seed, 'oracle'));
  }

  now(): number {
    return this.clock();
  }

  /** Ids of the markets that exist (removed ones excluded), in creation order. */
  marketIds(): string[] {
    return [...this.live.keys()];
  }

  /** Ids of the markets whose books move on every tick. */
  activeMarketIds(): string[] {
    return this.markets()
      .filter((market) => market.status === 'ACTIVE')
      .map((market) => market.id);
  }

  /** Ids of ACTIVE markets without a two-sided quote ("a market without price data", docs/upstream.md). */
  marketIdsWithoutPriceData(): string[] {
    return this.markets()
      .filter((market) => market.status === 'ACTIVE' && !quoteOf(market))
      .map((market) => market.id);
  }

  markets(): SimMarket[] {
    return [...this.live.values()];
  }

  /** A market by id (UUIDs compare case-insensitively). */
  market(marketId: string): SimMarket | undefined {
    return this.live.get(marketId.toLowerCase());
  }

  marketByExchangeAddress(address: string): SimMarket | undefined {
    const wanted = address.toLowerCase();
    return this.markets().find((market) => market.exchangeAddress === wanted);
  }

  orderBook(marketId: string): OrderBook | undefined {
    const market = this.market(marketId);
    return market ? orderBookOf(market) : undefined;
  }

  /**
   * A new ACTIVE market, listed from now on (the next index of the seed whose market starts live):
   * what a market listed upstream while the relay runs looks like.
   */
  addMarket(): SimMarket {
    while (marketTraits(this.nextIndex).initially !== 'live') this.nextIndex += 1;
    const market = createMarket(this.seed, this.nextIndex, this.clock(), this.tokens);
    this.nextIndex += 1;
    this.admit(market);
    return market;
  }

  private admit(market: SimMarket): void {
    this.live.set(market.id, market);
    const rng = createPrng(deriveSeed(this.seed, 'trades', market.index));
    this.tape.set(market.id, { flow: this.tradeFlow(market.index), rng });
  }

  /** The market disappears: every endpoint answers 404 or leaves it out from now on. */
  removeMarket(marketId: string): void {
    this.live.delete(marketId.toLowerCase());
  }

  /**
   * Freezes or unfreezes books: all of them, or one market's. A frozen market neither trades nor
   * changes status, so polling it changes nothing.
   */
  setBookChanging(on: boolean, marketId?: string): void {
    if (marketId === undefined) {
      this.booksChanging = on;
      return;
    }
    const market = this.market(marketId);
    if (market) market.changing = on;
  }

  /** False while every book is frozen by setBookChanging(false). */
  areBooksChanging(): boolean {
    return this.booksChanging;
  }

  lifecycle(): LifecyclePace {
    return { ...this.pace };
  }

  setLifecycle(change: Partial<LifecyclePace>): void {
    this.pace = checkedPace({ ...this.pace, ...change });
  }

  /**
   * Moves a market on in its lifecycle now: EXPIRED (its expiration time becomes now if later) or
   * RESOLVED (settled at once). A market never moves back to ACTIVE, nor from RESOLVED.
   */
  settle(marketId: string, status: SettledStatus): void {
    const market = this.market(marketId);
    if (market === undefined || market.status === 'RESOLVED' || market.status === status) return;
    const now = this.clock();
    market.expiresAt = Math.min(market.expiresAt, now);
    market.status = status;
    if (status === 'RESOLVED') resolve(market);
    this.changed(market, now);
  }

  /** Advances every market one step at the current clock time, and every oracle price. */
  tick(): void {
    const now = this.clock();
    const elapsedS = Math.max(0, now - this.lastTickAt) / 1000;
    this.lastTickAt = now;
    this.bringExpiryForward(now);
    for (const market of this.live.values()) {
      if (!this.booksChanging || !market.changing) continue;
      const tape = this.tape.get(market.id)!;
      const printed =
        tape.flow !== undefined && market.status === 'ACTIVE'
          ? this.print(market, printsDue(tape.flow, tape.rng, elapsedS), now)
          : 0;
      // With an activity profile a market moves with the chance its rate gives over the time since
      // the last tick (a Poisson process sampled at ticks).
      if (
        this.activity !== undefined &&
        !market.rng.chance(-Math.expm1(-this.activity(market.index) * elapsedS))
      ) {
        if (printed > 0) this.changed(market, now);
        continue;
      }
      // The step stamps the change, prints included: one change per tick.
      this.step(market, now);
    }
    for (const token of this.tokens) moveOraclePrice(token, this.oracleRng, now);
  }

  /**
   * Prints `count` trades in one market now, beside its book (sim/trade-flow.ts), e.g. a burst of
   * more than one activity page between two polls; returns how many it printed (none without a
   * two-sided quote or when the market is not ACTIVE).
   */
  printTrades(marketId: string, count: number): number {
    const market = this.market(marketId);
    if (market === undefined || market.status !== 'ACTIVE') return 0;
    const now = this.clock();
    const printed = this.print(market, count, now);
    if (printed > 0) this.changed(market, now);
    return printed;
  }

  /** Prints without stamping the change: the caller does, once. */
  private print(market: SimMarket, count: number, now: number): number {
    if (count === 0) return 0;
    return printTrades(market, this.tape.get(market.id)!.rng, count, Math.max(now, market.timestamp + 1));
  }

  /** At the configured pace, the ACTIVE market (of those moving) expiring soonest expires now. */
  private bringExpiryForward(now: number): void {
    const every = this.pace.expireEveryMs;
    if (every === 0 || !this.booksChanging || now - this.lastPacedExpiryAt < every) return;
    this.lastPacedExpiryAt = now;
    let soonest: SimMarket | undefined;
    for (const market of this.live.values()) {
      if (market.status !== 'ACTIVE' || !market.changing) continue;
      if (soonest === undefined || market.expiresAt < soonest.expiresAt) soonest = market;
    }
    if (soonest !== undefined) soonest.expiresAt = Math.min(soonest.expiresAt, now);
  }

  private step(market: SimMarket, now: number): void {
    if (market.status === 'ACTIVE' && now >= market.expiresAt) market.status = 'EXPIRED';
    if (market.status === 'EXPIRED' && now >= market.expiresAt + this.pace.resolutionDelayMs) {
      market.status = 'RESOLVED';
      resolve(market);
      this.changed(market, now);
    }
    if (market.status !== 'ACTIVE') return;
    driftFair(market);
    const at = Math.max(now, market.timestamp + 1);
    for (const fill of evolveBook(market.book, evolutionContext(market))) recordFill(market, fill, at);
    this.changed(market, now);
  }

  /** Book timestamps are the clock time of the change, strictly increasing per market. */
  private changed(market: SimMarket, now: number): void {
    market.timestamp = Math.max(now, market.timestamp + 1);
    this.onChange?.(market.id, market.timestamp);
    const quote = quoteOf(market);
    const last = market.quotes[market.quotes.length - 1];
    if (quote && (!last || market.timestamp - last.at >= QUOTE_SPACING_MS)) {
      market.quotes.push({ at: market.timestamp, bid: quote.bid, ask: quote.ask });
      if (market.quotes.length > QUOTE_CAP) market.quotes.shift();
    }
  }
}

function checkedPace(pace: LifecyclePace): LifecyclePace {
  for (const [name, value] of Object.entries(pace))
    if (!Number.isFinite(value) || value < 0) throw new RangeError(`${name} must be >= 0`);
  return pace;
}

const FAIR_LOW = 10_000_000;
const FAIR_HIGH = 90_000_000;

/** The fair price wanders a tick or two at a time, staying within 0.10..0.90. */
function driftFair(market: SimMarket): void {
  if (!market.rng.chance(0.3)) return;
  const step = market.tickSize * market.rng.pick([-2, -1, 1, 2]);
  market.fair = Math.min(FAIR_HIGH, Math.max(FAIR_LOW, market.fair + step));
}
