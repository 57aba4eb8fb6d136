/**
 * @module upstream/endpoints
 * The public upstream endpoints (docs/upstream.md), one row each: route, argument checks and where
 * the arguments go, response schema. UpstreamClient derives one typed method per row.
 */
import type { z } from 'zod';
import {
  checkFeedId,
  checkMarketId,
  checkMarketIdOrAddress,
  checkMarketIds,
  checkPathSegment,
  checkTokenId,
} from './arguments.ts';
import { endpoint } from './endpoint.ts';
import * as schemas from './schemas.ts';

// Query enums, spelled as the upstream lists them.
export type MarketsSortBy = 'volume' | 'newest' | 'ending_soon';
export type MarketsStatusFilter = 'all' | 'active' | 'expired' | 'resolved';
export type MarketsTimeFilter = 'all' | '24h' | '4h' | '1h' | '30m' | '15m' | '5m' | 'week' | 'month';
export type HistoryInterval = '1h' | '24h' | '7d' | '30d' | 'all';
export type EpochStatus = z.infer<typeof schemas.epochStatus>;

export interface PageQuery {
  limit?: number;
  offset?: number;
}
export interface MarketsQuery extends PageQuery {
  sortBy?: MarketsSortBy;
  statusFilter?: MarketsStatusFilter;
  timeFilter?: MarketsTimeFilter;
  tokenId?: number | string;
}
export interface HoldersQuery extends PageQuery {
  type: schemas.HolderSide;
}
export interface IncludeClosedQuery {
  includeClosed?: boolean;
}
export interface LeaderboardQuery {
  limit?: number;
  /** Date, optional start. */
  from?: string;
  /** Date, optional end. */
  to?: string;
}
export interface EpochsQuery {
  limit?: number;
  status?: EpochStatus;
}

// A 404 means "unknown market" by default; these codes are for endpoints about something else.
const NOT_A_MARKET = 'upstream_unavailable';
const UNKNOWN_NAME = 'bad_request';

const page = (query: PageQuery = {}) => ({ limit: query.limit, offset: query.offset });
const includeClosed = (query: IncludeClosedQuery = {}) => ({ include_closed: query.includeClosed });
const marketParams = (e: string, marketId: string) => ({ id: checkMarketId(e, marketId) });
const userParams = (e: string, username: string) => ({ username: checkPathSegment(e, 'username', username) });

export const endpoints = {
  health: endpoint({
    route: 'GET /health',
    response: schemas.upstreamHealth,
    notFound: NOT_A_MARKET,
    arity: 0,
    request: () => ({}),
  }),
  orderBook: endpoint({
    route: 'GET /clob/orderbook',
    response: schemas.orderBook,
    arity: 1,
    request: (e, marketId: string) => ({ query: { market_id: checkMarketId(e, marketId) } }),
  }),
  /** A POST, but a read-only query: retried like a GET. One entry per requested market. */
  clobPrices: endpoint({
    route: 'POST /clob/market-prices/batch',
    response: schemas.clobPriceBatchResponse,
    notFound: NOT_A_MARKET,
    arity: 1,
    request: (e, marketIds: string[]) => ({ body: { market_ids: checkMarketIds(e, marketIds) } }),
  }),
  markets: endpoint({
    route: 'GET /api/markets',
    response: schemas.marketsResponse,
    notFound: NOT_A_MARKET,
    arity: 1,
    request: (e, { tokenId, ...query }: MarketsQuery = {}) => ({
      query: {
        ...page(query),
        sortBy: query.sortBy,
        statusFilter: query.statusFilter,
        timeFilter: query.timeFilter,
        tokenId: tokenId === undefined ? undefined : checkTokenId(e, tokenId),
      },
    }),
  }),
  /** `idOrExchangeAddress`: a market UUID or its exchange address (hex). */
  market: endpoint({
    route: 'GET /api/markets/:id',
    response: schemas.marketResponse,
    arity: 1,
    request: (e, idOrExchangeAddress: string) => ({
      params: { id: checkMarketIdOrAddress(e, idOrExchangeAddress) },
    }),
  }),
  marketHistory: endpoint({
    route: 'GET /api/markets/:id/history',
    response: schemas.historyResponse,
    arity: 2,
    request: (e, marketId: string, query: { interval?: HistoryInterval } = {}) => ({
      params: marketParams(e, marketId),
      query: { interval: query.interval },
    }),
  }),
  marketHolders: endpoint({
    route: 'GET /api/markets/:id/holders',
    response: schemas.holdersResponse,
    arity: 2,
    request: (e, marketId: string, query: HoldersQuery) => ({
      params: marketParams(e, marketId),
      query: { type: query.type, ...page(query) },
    }),
  }),
  marketComments: endpoint({
    route: 'GET /api/markets/:id/comments',
    response: schemas.commentsResponse,
    arity: 2,
    request: (e, marketId: string, query?: PageQuery) => ({
      params: marketParams(e, marketId),
      query: page(query),
    }),
  }),
  marketActivity: endpoint({
    route: 'GET /api/markets/:id/activity',
    arity: 2,
    request: (e, marketId: string, query?: PageQuery) => ({
      params: marketParams(e, marketId),
      query: page(query),
    }),
    response: schemas.marketActivityResponse,
  }),
  probabilities: endpoint({
    route: 'GET /api/markets/probabilities',
    response: schemas.probabilitiesResponse,
    notFound: NOT_A_MARKET,
    arity: 0,
    request: () => ({}),
  }),
  search: endpoint({
    route: 'GET /api/search',
    response: schemas.searchResponse,
    notFound: NOT_A_MARKET,
    arity: 1,
    request: (_e, q: string) => ({ query: { q } }),
  }),
  tokens: endpoint({
    route: 'GET /api/tokens',
    response: schemas.tokensResponse,
    notFound: NOT_A_MARKET,
    arity: 1,
    request: (_e, query: { query?: string } = {}) => ({ query: { query: query.query } }),
  }),
  token: endpoint({
    route: 'GET /api/tokens/:id',
    response: schemas.tokenResponse,
    notFound: UNKNOWN_NAME,
    arity: 1,
    request: (e, id: number | string) => ({ params: { id: checkTokenId(e, id) } }),
  }),
  tokenPrice: endpoint({
    route: 'GET /api/tokens/price/:feedId',
    response: schemas.tokenPriceResponse,
    notFound: UNKNOWN_NAME,
    arity: 1,
    request: (e, feedId: string) => ({ params: { feedId: checkFeedId(e, feedId) } }),
  }),
  user: endpoint({
    route: 'GET /api/users/:username',
    response: schemas.userResponse,
    notFound: UNKNOWN_NAME,
    arity: 1,
    request: (e, username: string) => ({ params: userParams(e, username) }),
  }),
  userProfile: endpoint({
    route: 'GET /api/users/:username/profile',
    response: schemas.userProfileResponse,
    notFound: UNKNOWN_NAME,
    arity: 2,
    request: (e, username: string, query?: IncludeClosedQuery) => ({
      params: userParams(e, username),
      query: includeClosed(query),
    }),
  }),
  userStats: endpoint({
    route: 'GET /api/users/:username/stats',
    response: schemas.userStatsResponse,
    notFound: UNKNOWN_NAME,
    arity: 1,
    request: (e, username: string) => ({ params: userParams(e, username) }),
  }),
  userPositions: endpoint({
    route: 'GET /api/users/:username/positions',
    response: schemas.userPositionsResponse,
    notFound: UNKNOWN_NAME,
    arity: 2,
    request: (e, username: string, query?: IncludeClosedQuery) => ({
      params: userParams(e, username),
      query: includeClosed(query),
    }),
  }),
  userActivity: endpoint({
    route: 'GET /api/users/:username/activity',
    response: schemas.userActivityResponse,
    notFound: UNKNOWN_NAME,
    arity: 1,
    request: (e, username: string) => ({ params: userParams(e, username) }),
  }),
  netWorthHistory: endpoint({
    route: 'GET /api/users/:username/net-worth-history',
    response: schemas.netWorthHistoryResponse,
    notFound: UNKNOWN_NAME,
    arity: 2,
    request: (e, username: string, query: { days?: number } = {}) => ({
      params: userParams(e, username),
      query: { days: query.days },
    }),
  }),
  rewardsProgram: endpoint({
    route: 'GET /api/rewards/program',
    response: schemas.rewardsProgramResponse,
    notFound: NOT_A_MARKET,
    arity: 0,
    request: () => ({}),
  }),
  rewardsLeaderboard: endpoint({
    route: 'GET /api/rewards/leaderboard',
    response: schemas.leaderboardResponse,
    notFound: NOT_A_MARKET,
    arity: 1,
    request: (_e, query: LeaderboardQuery = {}) => ({
      query: { limit: query.limit, from: query.from, to: query.to },
    }),
  }),
  rewardsEpochs: endpoint({
    route: 'GET /api/rewards/epochs',
    response: schemas.epochsResponse,
    notFound: NOT_A_MARKET,
    arity: 1,
    request: (_e, query: EpochsQuery = {}) => ({ query: { limit: query.limit, status: query.status } }),
  }),
  marketData: endpoint({
    route: 'GET /api/market-data/:marketId',
    response: schemas.marketDataSnapshot,
    arity: 1,
    request: (e, marketId: string) => ({ params: { marketId: checkMarketId(e, marketId) } }),
  }),
  /**
   * A POST, but a read-only query: retried like a GET. Its maximum list size is not shown upstream;
   * the CLOB batch's 100 is applied so the relay never depends on an unknown limit.
   */
  marketDataBatch: endpoint({
    route: 'POST /api/market-data/batch',
    response: schemas.marketDataBatchResponse,
    notFound: NOT_A_MARKET,
    arity: 1,
    request: (e, marketIds: string[]) => ({ body: { market_ids: checkMarketIds(e, marketIds) } }),
  }),
};
