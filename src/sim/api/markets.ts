/**
 * @module sim/api/markets
 * The market endpoints (docs/upstream.md, with its limits): the filtered,
 * sorted, paginated list, one market, its probability history, holders, comments and trade
 * activity, and the map of probabilities. Choices where upstream documents nothing are in
 * docs/upstream.md.
 */

import { isMarketId } from '../../../packages/protocol/src/protocol/limits.ts';
import type {
  CommentsResponse,
  HistoryResponse,
  HoldersResponse,
  MarketActivityResponse,
  MarketResponse,
  MarketsResponse,
  ProbabilitiesResponse,
  ProbabilityEntry,
} from '../../upstream/schemas.ts';
import { commentsOf } from '../comments.ts';
import { formatPrice, formatTrimmed, NOTIONAL_SCALE, priceNumber, SIZE_SCALE } from '../fixed-point.ts';
import { DEFAULT_HISTORY_INTERVAL, historyIntervals, historyOf } from '../history.ts';
import type { MarketStatus, SimMarket } from '../market.ts';
import type { MarketSimulation } from '../market-simulation.ts';
import type { SimulatorProfile } from '../profile.ts';
import { detailOf, isoTime, listItemOf, probabilityOf } from '../snapshots.ts';
import {
  badRequest,
  malformedId,
  ok,
  pageOf,
  paginate,
  parseEnum,
  parseLimit,
  parseOffset,
  unknownId,
} from './http.ts';
import { get, type Route } from './router.ts';

const sortOrders = ['volume', 'newest', 'ending_soon'] as const;
const statusFilters = ['all', 'active', 'expired', 'resolved'] as const;
const timeFilters = ['all', '24h', '4h', '1h', '30m', '15m', '5m', 'week', 'month'] as const;
type TimeFilter = (typeof timeFilters)[number];

const MINUTE_MS = 60_000;
/** `timeFilter`: markets expiring within this window from now (docs/upstream.md). */
const TIME_WINDOWS_MS: Record<Exclude<TimeFilter, 'all'>, number> = {
  '5m': 5 * MINUTE_MS,
  '15m': 15 * MINUTE_MS,
  '30m': 30 * MINUTE_MS,
  '1h': 60 * MINUTE_MS,
  '4h': 240 * MINUTE_MS,
  '24h': 1_440 * MINUTE_MS,
  week: 7 * 1_440 * MINUTE_MS,
  month: 30 * 1_440 * MINUTE_MS,
};
const STATUS_OF_FILTER: Record<Exclude<(typeof statusFilters)[number], 'all'>, MarketStatus> = {
  active: 'ACTIVE',
  expired: 'EXPIRED',
  resolved: 'RESOLVED',
};

/** Page sizes: upstream's where known, the simulator's caps otherwise; the profile's `pageMax` caps them all. */
const MARKETS_DEFAULT_LIMIT = 20;
export const HOLDERS_LIMIT = { default: 20, max: 100 };
export const COMMENTS_LIMIT = { default: 20, max: 50 };
export const ACTIVITY_LIMIT = { default: 20, max: 100 };

const EXCHANGE_ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** `:id` is a market UUID or its exchange address (docs/upstream.md). */
function findMarket(sim: MarketSimulation, id: string): SimMarket {
  if (!isMarketId(id) && !EXCHANGE_ADDRESS.test(id))
    throw malformedId('market id must be a UUID or an exchange address');
  const market = isMarketId(id) ? sim.market(id) : sim.marketByExchangeAddress(id);
  if (!market) throw unknownId(`market ${id} not found`);
  return market;
}

function listMarkets(
  sim: MarketSimulation,
  query: Record<string, string>,
  maxLimit: number,
): MarketsResponse {
  const limit = parseLimit(query, { default: MARKETS_DEFAULT_LIMIT, max: maxLimit });
  const offset = parseOffset(query);
  const sortBy = parseEnum(query, 'sortBy', sortOrders, 'volume');
  const statusFilter = parseEnum(query, 'statusFilter', statusFilters, 'all');
  const timeFilter = parseEnum(query, 'timeFilter', timeFilters, 'all');
  const tokenIdRaw = query.tokenId;
  if (tokenIdRaw !== undefined && tokenIdRaw !== '' && !/^\d{1,9}$/.test(tokenIdRaw)) {
    throw badRequest('tokenId must be an integer');
  }
  const now = sim.now();
  const selected = sim.markets().filter((market) => {
    if (statusFilter !== 'all' && market.status !== STATUS_OF_FILTER[statusFilter]) return false;
    if (timeFilter !== 'all') {
      const untilExpiry = market.expiresAt - now;
      if (untilExpiry <= 0 || untilExpiry > TIME_WINDOWS_MS[timeFilter]) return false;
    }
    return tokenIdRaw === undefined || tokenIdRaw === '' || market.token.id === Number(tokenIdRaw);
  });
  selected.sort(comparator(sortBy, now));
  const page = paginate(selected.map(listItemOf), limit, offset);
  return { success: true, markets: page.items, pagination: page.pagination };
}

function comparator(
  sortBy: (typeof sortOrders)[number],
  now: number,
): (a: SimMarket, b: SimMarket) => number {
  const byIndex = (a: SimMarket, b: SimMarket): number => a.index - b.index;
  switch (sortBy) {
    case 'volume':
      return (a, b) => (a.volume === b.volume ? byIndex(a, b) : a.volume > b.volume ? -1 : 1);
    case 'newest':
      return (a, b) => b.createdAt - a.createdAt || byIndex(a, b);
    case 'ending_soon':
      // Markets still to expire, soonest first; then those already expired, most recent first.
      return (a, b) => {
        const aFuture = a.expiresAt > now;
        const bFuture = b.expiresAt > now;
        if (aFuture !== bFuture) return aFuture ? -1 : 1;
        return (aFuture ? a.expiresAt - b.expiresAt : b.expiresAt - a.expiresAt) || byIndex(a, b);
      };
  }
}

/** A paged list's limits under the profile's largest page. */
function capped(limits: { default: number; max: number }, profile: SimulatorProfile) {
  const max = Math.min(limits.max, profile.pageMax);
  return { default: Math.min(limits.default, max), max };
}

export function marketRoutes(sim: MarketSimulation, profile: SimulatorProfile): Route[] {
  return [
    get('/api/markets', (request) => ok(listMarkets(sim, request.query, profile.pageMax))),
    get('/api/markets/probabilities', () => {
      // Markets without a two-sided quote have no probability entry.
      const probabilities: Record<string, ProbabilityEntry> = {};
      for (const market of sim.markets()) {
        const entry = probabilityOf(market);
        if (entry) probabilities[market.id] = entry;
      }
      const body: ProbabilitiesResponse = { success: true, probabilities };
      return ok(body);
    }),
    get('/api/markets/:id', (_request, params) => {
      const market = detailOf(findMarket(sim, params.id!), profile.detailExtraFields);
      const body: MarketResponse = { success: true, market };
      return ok(body);
    }),
    get('/api/markets/:id/history', (request, params) => {
      const market = findMarket(sim, params.id!);
      const interval = parseEnum(request.query, 'interval', historyIntervals, DEFAULT_HISTORY_INTERVAL);
      const body: HistoryResponse = {
        success: true,
        market_id: market.id,
        history: historyOf(market, interval, sim.startedAt, sim.now()),
      };
      return ok(body);
    }),
    get('/api/markets/:id/holders', (request, params) => {
      const market = findMarket(sim, params.id!);
      const type = request.query.type?.toUpperCase();
      if (type === undefined || type === '') throw badRequest('type is required (YES or NO)');
      if (type !== 'YES' && type !== 'NO') throw badRequest('type must be YES or NO');
      const holders = sim.holdings
        .filter((holding) => holding.market === market && holding.outcome === type)
        .sort((a, b) => b.quantity - a.quantity || a.user.index - b.user.index)
        .map((holding) => ({
          username: holding.user.username,
          wallet_address: holding.user.walletAddress,
          quantity: Number(formatTrimmed(BigInt(holding.quantity), SIZE_SCALE)),
          average_entry_price: priceNumber(BigInt(holding.avgPrice)),
        }));
      const page = pageOf(request.query, holders, capped(HOLDERS_LIMIT, profile));
      const body: HoldersResponse = {
        success: true,
        market_id: market.id,
        type,
        holders: page.items,
        pagination: page.pagination,
      };
      return ok(body);
    }),
    get('/api/markets/:id/comments', (request, params) => {
      const market = findMarket(sim, params.id!);
      // Pagination counts top-level comments; replies ride along (docs/upstream.md).
      const page = pageOf(
        request.query,
        commentsOf(sim.seed, market, sim.users),
        capped(COMMENTS_LIMIT, profile),
      );
      const body: CommentsResponse = {
        success: true,
        market_id: market.id,
        comments: page.items,
        pagination: page.pagination,
      };
      return ok(body);
    }),
    get('/api/markets/:id/activity', (request, params) => {
      const market = findMarket(sim, params.id!);
      const trades = profile.activityOrder === 'oldest-first' ? market.trades : [...market.trades].reverse();
      const page = pageOf(request.query, trades, capped(ACTIVITY_LIMIT, profile));
      const body: MarketActivityResponse = {
        success: true,
        market_id: market.id,
        activity: page.items.map((trade) => ({
          activity_id: trade.id,
          activity_type: 'TRADE',
          price: formatPrice(BigInt(trade.price)),
          size: formatTrimmed(BigInt(trade.size), SIZE_SCALE),
          total_value: formatTrimmed(BigInt(trade.size) * BigInt(trade.price), NOTIONAL_SCALE),
          activity_timestamp: isoTime(trade.at),
        })),
        // Upstream: this endpoint's pagination has no total.
        pagination: {
          limit: page.pagination.limit,
          offset: page.pagination.offset,
          hasMore: page.pagination.hasMore,
        },
      };
      return ok(body);
    }),
  ];
}
