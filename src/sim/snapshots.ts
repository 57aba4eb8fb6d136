/**
 * @module sim/snapshots
 * Turns a simulated market into the upstream's resource shapes (docs/upstream.md), typed
 * by the zod-derived types of upstream/schemas.ts so the simulator and the schemas cannot drift.
 */
import type {
  ClobPriceSnapshot,
  MarketDataSnapshot,
  MarketDetail,
  MarketListItem,
  OrderBook,
  OrderEntry,
  ProbabilityEntry,
} from '../upstream/schemas.ts';
import { formatPrice, formatTrimmed, NOTIONAL_SCALE, priceNumber, SIZE_SCALE } from './fixed-point.ts';
import { quoteOf, type SimMarket, yesValue } from './market.ts';
import type { PriceLevel } from './order-book.ts';

/** Order entries carry the outcome token they trade; the single book of a market trades YES. */
export const YES_TOKEN_ID = 1;

export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}

/** How the CLOB batch writes milliseconds, which it may omit (docs/upstream.md; sim/profile.ts). */
export type BatchMilliseconds = 'unless-zero' | 'never';

/**
 * The CLOB batch's time: without milliseconds when they are zero (so clients meet both forms), or
 * never with them.
 */
export function isoTimeBatch(ms: number, milliseconds: BatchMilliseconds = 'unless-zero'): string {
  const iso = isoTime(ms);
  return milliseconds === 'never' || iso.endsWith('.000Z') ? `${iso.slice(0, -5)}Z` : iso;
}

function entries(levels: readonly PriceLevel[]): OrderEntry[] {
  return levels.flatMap((level) =>
    level.orders.map((order) => ({
      id: order.id,
      price: formatPrice(BigInt(level.price)),
      size: formatTrimmed(BigInt(order.size), SIZE_SCALE),
      token_id: YES_TOKEN_ID,
    })),
  );
}

export function orderBookOf(market: SimMarket): OrderBook {
  return {
    market_id: market.id,
    bids: entries(market.book.bids),
    asks: entries(market.book.asks),
    last_price: formatPrice(BigInt(market.lastPrice)),
    timestamp: isoTime(market.timestamp),
  };
}

export function clobPriceOf(market: SimMarket, milliseconds?: BatchMilliseconds): ClobPriceSnapshot {
  const quote = quoteOf(market);
  const timestamp = isoTimeBatch(market.timestamp, milliseconds);
  if (!quote) return { market_id: market.id, timestamp };
  return {
    market_id: market.id,
    ...quotePrices(quote),
    last_price: formatPrice(BigInt(market.lastPrice)),
    timestamp,
  };
}

/** A two-sided quote as upstream's decimal strings. */
function quotePrices(quote: NonNullable<ReturnType<typeof quoteOf>>) {
  return {
    best_bid: formatPrice(BigInt(quote.bid)),
    best_ask: formatPrice(BigInt(quote.ask)),
    midpoint_price: formatPrice(BigInt(quote.midpoint)),
    spread: formatPrice(BigInt(quote.spread)),
  };
}

/** Undefined for a market without a two-sided quote (the proxy's snapshot requires every price). */
export function marketDataOf(market: SimMarket): MarketDataSnapshot | undefined {
  const quote = quoteOf(market);
  if (!quote) return undefined;
  return { market_id: market.id, ...quotePrices(quote), timestamp: isoTime(market.timestamp) };
}

export function probabilityOf(market: SimMarket): ProbabilityEntry | undefined {
  const quote = quoteOf(market);
  if (!quote) return undefined;
  return {
    midpoint: priceNumber(BigInt(quote.midpoint)),
    best_bid: priceNumber(BigInt(quote.bid)),
    best_ask: priceNumber(BigInt(quote.ask)),
    last_trade_price: priceNumber(BigInt(market.lastPrice)),
    timestamp: isoTime(market.timestamp),
  };
}

/** Traded volume as the JSON number the markets endpoints use (docs/upstream.md). */
export function volumeNumber(market: SimMarket): number {
  return Number(formatTrimmed(market.volume, NOTIONAL_SCALE));
}

export function listItemOf(market: SimMarket): MarketListItem {
  return {
    market_id: market.id,
    title: market.title,
    status: market.status,
    exchange_address: market.exchangeAddress,
    oracle_address: market.oracleAddress,
    expiration_timestamp: isoTime(market.expiresAt),
    taker_fee_bps: market.takerFeeBps,
    probability: priceNumber(BigInt(yesValue(market))),
    volume: volumeNumber(market),
  };
}

/**
 * The detail form adds three fields to the list form (docs/upstream.md), so with `extraFields` it
 * keeps the list form's taker_fee_bps too; without, it has only the fields the interface shows.
 */
export function detailOf(market: SimMarket, extraFields = true): MarketDetail {
  const { taker_fee_bps, ...shown } = listItemOf(market);
  return {
    ...shown,
    ...(extraFields ? { taker_fee_bps } : {}),
    market_name: market.marketName,
    question: market.question,
    oracle_feed_id: market.token.oracleFeedId,
  };
}
