/**
 * @module upstream/client
 * The typed upstream client. The public upstream endpoints (docs/upstream.md) are a table, one row
 * each: path, response schema, the caller's arguments (checked, then placed in the path, query or
 * body), and the protocol code of a 404 where the endpoint is not about one market. UpstreamClient
 * derives one method per row, each resolving to the type of its zod schema, all sent through one
 * transport (transport.ts: caps, retries, timeouts, validation).
 */
import type { z } from 'zod';
import type { CanonicalRestPath } from '../../packages/protocol/src/protocol/rest-paths.ts';
import * as accounts from './account-schemas.ts';
import {
  args,
  checkFeedId,
  checkMarketId,
  checkMarketIdOrAddress,
  checkMarketIds,
  checkPathSegment,
  checkTokenId,
  endpointMethods,
  get,
  post,
} from './endpoint.ts';
import { UpstreamError, UpstreamHttpError } from './errors.ts';
import type { HttpRequest, QueryValue } from './exchange.ts';
import * as schemas from './schemas.ts';
import { type CallInit, UpstreamTransport, type UpstreamTransportOptions } from './transport.ts';

// Query enums, spelled as the upstream lists them.
export type MarketsSortBy = 'volume' | 'newest' | 'ending_soon';
export type MarketsStatusFilter = 'all' | 'active' | 'expired' | 'resolved';
export type MarketsTimeFilter = 'all' | '24h' | '4h' | '1h' | '30m' | '15m' | '5m' | 'week' | 'month';
export type EpochStatus = z.infer<typeof accounts.epochStatus>;

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

/** A caller's query object: every field goes into the query string as it is. */
type QueryFields<Q> = { [K in keyof Q]?: QueryValue };

/** The named fields of a query object, and none of whatever else the caller's object carries. */
function pick<Q extends QueryFields<Q>, K extends keyof Q & string>(
  query: Q | undefined,
  keys: readonly K[],
) {
  const picked: Partial<Pick<Q, K>> = {};
  for (const key of keys) if (query?.[key] !== undefined) picked[key] = query[key];
  return picked;
}

// Argument lists that several endpoints share.
const none = args<[]>(0, () => ({}));
const oneMarket = args(1, (e, marketId: string) => ({ params: { id: checkMarketId(e, marketId) } }));
const marketIdsBody = args(1, (e, marketIds: string[]) => ({
  body: { market_ids: checkMarketIds(e, marketIds) },
}));
const oneUser = args(1, (e, username: string) => ({
  params: { username: checkPathSegment(e, 'username', username) },
}));

/** Arguments `(id, query?)`: the id placed by `first`, then the named query fields. */
function withQuery<Q extends QueryFields<Q>, P extends string>(
  first: ReturnType<typeof args<[id: string], P>>,
  keys: readonly (keyof Q & string)[],
) {
  return args(2, (e, id: string, query?: Q) => ({ ...first.place(e, id), query: pick(query, keys) }));
}

const PAGE = ['limit', 'offset'] as const;
const oneMarketPaged = withQuery<PageQuery, 'id'>(oneMarket, PAGE);
const oneUserIncludingClosed = args(2, (e, username: string, query?: IncludeClosedQuery) => ({
  ...oneUser.place(e, username),
  query: { include_closed: query?.includeClosed },
}));
const marketsQuery = args(1, (e, query: MarketsQuery = {}) => {
  const { tokenId, ...rest } = query;
  const fields = pick(rest, [...PAGE, 'sortBy', 'statusFilter', 'timeFilter']);
  return { query: { ...fields, tokenId: tokenId === undefined ? undefined : checkTokenId(e, tokenId) } };
});
const queryOf = <Q extends QueryFields<Q>>(keys: readonly (keyof Q & string)[]) =>
  args(1, (_e, query?: Q) => ({ query: pick(query, keys) }));

// A 404 means "unknown market" unless a row says otherwise.
const NOT_A_MARKET = 'upstream_unavailable';
const UNKNOWN_NAME = 'bad_request';

export const endpoints = {
  health: get('/health', schemas.upstreamHealth, none, NOT_A_MARKET),
  orderBook: get(
    '/clob/orderbook',
    schemas.orderBook,
    args(1, (e, marketId: string) => ({ query: { market_id: checkMarketId(e, marketId) } })),
  ),
  /** One entry per requested market. */
  clobPrices: post('/clob/market-prices/batch', schemas.clobPriceBatchResponse, marketIdsBody, NOT_A_MARKET),
  markets: get('/api/markets', schemas.marketsResponse, marketsQuery, NOT_A_MARKET),
  /** `idOrExchangeAddress`: a market UUID or its exchange address (hex). */
  market: get(
    '/api/markets/:id',
    schemas.marketResponse,
    args(1, (e, idOrExchangeAddress: string) => ({
      params: { id: checkMarketIdOrAddress(e, idOrExchangeAddress) },
    })),
  ),
  marketHistory: get(
    '/api/markets/:id/history',
    schemas.historyResponse,
    withQuery<{ interval?: schemas.HistoryInterval }, 'id'>(oneMarket, ['interval']),
  ),
  marketHolders: get(
    '/api/markets/:id/holders',
    schemas.holdersResponse,
    args(2, (e, marketId: string, query: HoldersQuery) => ({
      ...oneMarket.place(e, marketId),
      query: pick(query, ['type', ...PAGE]),
    })),
  ),
  marketComments: get('/api/markets/:id/comments', schemas.commentsResponse, oneMarketPaged),
  marketActivity: get('/api/markets/:id/activity', schemas.marketActivityResponse, oneMarketPaged),
  probabilities: get('/api/markets/probabilities', schemas.probabilitiesResponse, none, NOT_A_MARKET),
  search: get(
    '/api/search',
    schemas.searchResponse,
    args(1, (_e, q: string) => ({ query: { q } })),
    NOT_A_MARKET,
  ),
  tokens: get('/api/tokens', schemas.tokensResponse, queryOf<{ query?: string }>(['query']), NOT_A_MARKET),
  token: get(
    '/api/tokens/:id',
    schemas.tokenResponse,
    args(1, (e, id: number | string) => ({ params: { id: checkTokenId(e, id) } })),
    UNKNOWN_NAME,
  ),
  tokenPrice: get(
    '/api/tokens/price/:feedId',
    schemas.tokenPriceResponse,
    args(1, (e, feedId: string) => ({ params: { feedId: checkFeedId(e, feedId) } })),
    UNKNOWN_NAME,
  ),
  user: get('/api/users/:username', accounts.userResponse, oneUser, UNKNOWN_NAME),
  userProfile: get(
    '/api/users/:username/profile',
    accounts.userProfileResponse,
    oneUserIncludingClosed,
    UNKNOWN_NAME,
  ),
  userStats: get('/api/users/:username/stats', accounts.userStatsResponse, oneUser, UNKNOWN_NAME),
  userPositions: get(
    '/api/users/:username/positions',
    accounts.userPositionsResponse,
    oneUserIncludingClosed,
    UNKNOWN_NAME,
  ),
  userActivity: get('/api/users/:username/activity', accounts.userActivityResponse, oneUser, UNKNOWN_NAME),
  netWorthHistory: get(
    '/api/users/:username/net-worth-history',
    accounts.netWorthHistoryResponse,
    withQuery<{ days?: number }, 'username'>(oneUser, ['days']),
    UNKNOWN_NAME,
  ),
  rewardsProgram: get('/api/rewards/program', accounts.rewardsProgramResponse, none, NOT_A_MARKET),
  rewardsLeaderboard: get(
    '/api/rewards/leaderboard',
    accounts.leaderboardResponse,
    queryOf<LeaderboardQuery>(['limit', 'from', 'to']),
    NOT_A_MARKET,
  ),
  rewardsEpochs: get(
    '/api/rewards/epochs',
    accounts.epochsResponse,
    queryOf<EpochsQuery>(['limit', 'status']),
    NOT_A_MARKET,
  ),
  marketData: get(
    '/api/market-data/:marketId',
    schemas.marketDataSnapshot,
    args(1, (e, marketId: string) => ({ params: { marketId: checkMarketId(e, marketId) } })),
  ),
  /**
   * Its maximum list size is not shown upstream; the CLOB batch's 100 is applied so the relay never
   * depends on an unknown limit.
   */
  marketDataBatch: post(
    '/api/market-data/batch',
    schemas.marketDataBatchResponse,
    marketIdsBody,
    NOT_A_MARKET,
  ),
};

export type { HttpRequest } from './exchange.ts';
export { ResponseMemo } from './outcome.ts';
export type { CallInit, UpstreamRequestEvent } from './transport.ts';
export type UpstreamClientOptions = UpstreamTransportOptions;
/** A public GET, as the `rest` channel asks for it. */
type PublicRequest = Pick<CanonicalRestPath, 'template' | 'pathname' | 'query'>;

/** The endpoint methods alone, as `singleAttempt()` gives them. */
export const UpstreamEndpoints = endpointMethods(endpoints);
export type UpstreamEndpoints = InstanceType<typeof UpstreamEndpoints>;

export class UpstreamClient extends UpstreamEndpoints {
  readonly events: UpstreamTransport['events'];
  readonly #transport: UpstreamTransport;

  constructor(options: UpstreamClientOptions) {
    const transport = new UpstreamTransport(options);
    super(transport);
    this.#transport = transport;
    this.events = transport.events;
  }

  /** One request passed through as it is, inside the caps (transport.ts `forward`). */
  forward(request: HttpRequest, init?: CallInit): Promise<{ status: number; text: string }> {
    return this.#transport.forward(request, init);
  }

  /**
   * The same endpoints through the same transport (caps, budget, events), each call one attempt:
   * for polls, whose next poll is their retry, so that a failing upstream gets one request per poll
   * and a retry never overlaps the next poll (docs/scheduler.md "Rate limits"). `publicBody` is one
   * attempt already.
   */
  singleAttempt(): UpstreamEndpoints & Pick<UpstreamClient, 'publicBody'> {
    const transport = this.#transport;
    const endpoints = new UpstreamEndpoints({ call: (request, init) => transport.call(request, init, 0) });
    return Object.assign(endpoints, {
      publicBody: (request: PublicRequest, init?: CallInit) => this.publicBody(request, init),
    });
  }

  /**
   * A public GET's body exactly as upstream served it, parsed but not passed through a schema, so
   * no field is dropped or retyped (the `rest` channel). A non-2xx answer rejects with
   * UpstreamHttpError: a 404 is the path's resource not existing (a user, a market).
   */
  async publicBody(request: PublicRequest, init?: CallInit): Promise<unknown> {
    const endpoint = `GET ${request.template}`;
    const { status, text } = await this.forward(
      { endpoint, method: 'GET', path: request.pathname, query: request.query },
      init,
    );
    if (status < 200 || status > 299) throw new UpstreamHttpError(endpoint, status);
    try {
      return JSON.parse(text);
    } catch (cause) {
      throw new UpstreamError(endpoint, 'the body is not JSON', { cause });
    }
  }

  /** Load snapshot for metrics and the status page. */
  load(): { inFlight: number; queued: number } {
    return this.#transport.load();
  }

  /** Aborts every waiting and running call (they reject with UpstreamError) and closes the pool. */
  close(): Promise<void> {
    return this.#transport.close();
  }
}
