/**
 * @module upstream/client
 * The typed upstream client: one method per public endpoint of docs/upstream.md,
 * over an undici keep-alive pool, with per-attempt timeouts, retries, a cap on requests in flight
 * and on requests started per second, and every body validated against src/upstream/schemas.ts.
 */
import { EventEmitter, setMaxListeners } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import pLimit, { type LimitFunction } from 'p-limit';
import { Pool } from 'undici';
import type { z } from 'zod';
import type { ErrorCode } from '../protocol/messages.ts';
import { linkSignals, raceAbort } from './abort.ts';
import {
  checkFeedId,
  checkMarketId,
  checkMarketIdOrAddress,
  checkMarketIds,
  checkPathSegment,
  checkTokenId,
} from './arguments.ts';
import {
  type SchemaIssue,
  UpstreamError,
  UpstreamHttpError,
  UpstreamNetworkError,
  UpstreamSchemaError,
  UpstreamTimeoutError,
} from './errors.ts';
import { backoffDelayMs, retryAfterMs } from './retry-policy.ts';
import * as schemas from './schemas.ts';
import { TokenBucket } from './token-bucket.ts';

/**
 * One per attempt that reached an outcome; an attempt cut short by the caller's signal or by
 * `close()` is not an upstream outcome and reports nothing.
 */
export interface UpstreamRequestEvent {
  /** Route template, e.g. `GET /clob/orderbook`, `GET /api/markets/:id`. */
  endpoint: string;
  outcome: 'ok' | 'http_error' | 'timeout' | 'network_error' | 'schema_error' | 'rate_limited';
  status?: number;
  /** Duration of this one attempt, from sending to the end of validation. */
  durationMs: number;
  /** 1-based. */
  attempt: number;
}

export interface UpstreamClientOptions {
  baseUrl: string;
  /** Per attempt, default 5000. */
  timeoutMs?: number;
  /** Extra attempts after the first, default 2. */
  retries?: number;
  /** Backoff base, default 100 ms (exponential, full jitter, capped at 2 s). */
  retryBaseMs?: number;
  /** Longest `Retry-After` honoured on a 429, default 30 s. */
  maxRetryAfterMs?: number;
  /** Requests in flight at most, default 16. */
  concurrency?: number;
  /** Requests started per second at most, default 50. */
  rps?: number;
  /** undici pool connections, default `concurrency`. */
  connections?: number;
}

// Query enums, spelled as docs/upstream.md lists them.
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
export interface CallInit {
  signal?: AbortSignal;
}

const RETRY_CAP_MS = 2000;

type QueryValue = string | number | boolean | undefined;

interface Route<T> {
  endpoint: string;
  method: 'GET' | 'POST';
  /** Path below the base URL, with parameters already validated and encoded. */
  path: string;
  query?: Record<string, QueryValue>;
  body?: unknown;
  schema: z.ZodType<T>;
  /** Protocol code for a 404 when the endpoint is not about one market (default `unknown_market`). */
  notFoundCode?: ErrorCode;
}

type AttemptResult<T> =
  | { ok: true; value: T }
  | { ok: false; error: UpstreamError; retryable: boolean; retryAfterMs?: number };

type Outcome = UpstreamRequestEvent['outcome'];

export class UpstreamClient {
  readonly events = new EventEmitter<{ request: [UpstreamRequestEvent] }>();

  readonly #pool: Pool;
  readonly #pathPrefix: string;
  readonly #timeoutMs: number;
  readonly #retries: number;
  readonly #retryBaseMs: number;
  readonly #maxRetryAfterMs: number;
  readonly #limit: LimitFunction;
  readonly #bucket: TokenBucket;
  readonly #closing = new AbortController();
  #closed: Promise<void> | undefined;
  #inFlight = 0;
  #queued = 0;

  constructor(options: UpstreamClientOptions) {
    const base = new URL(options.baseUrl);
    if (base.protocol !== 'http:' && base.protocol !== 'https:') {
      throw new TypeError(`upstream base URL must be http(s): ${options.baseUrl}`);
    }
    const concurrency = options.concurrency ?? 16;
    this.#pathPrefix = base.pathname.replace(/\/+$/, '');
    this.#timeoutMs = options.timeoutMs ?? 5000;
    this.#retries = options.retries ?? 2;
    this.#retryBaseMs = options.retryBaseMs ?? 100;
    this.#maxRetryAfterMs = options.maxRetryAfterMs ?? 30_000;
    this.#limit = pLimit(concurrency);
    this.#bucket = new TokenBucket({ ratePerSecond: options.rps ?? 50 });
    // Every call in flight listens on the shutdown signal (and removes its listener after), so more
    // than ten at once is normal, not the leak Node's default warning assumes.
    setMaxListeners(0, this.#closing.signal);
    // Keep-alive is undici's default; one connection per concurrent request avoids pipelining
    // behind a slow response.
    this.#pool = new Pool(base.origin, {
      connections: options.connections ?? concurrency,
      connect: { timeout: this.#timeoutMs },
    });
  }

  /** Load snapshot for metrics and the status page. */
  load(): { inFlight: number; queued: number } {
    return { inFlight: this.#inFlight, queued: this.#queued };
  }

  /** Aborts every waiting and running call (they reject with UpstreamError) and closes the pool. */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      this.#closing.abort(new UpstreamError('client', 'upstream client closed'));
      await this.#pool.close();
    })();
    return this.#closed;
  }

  // -------------------------------------------------------------------------------------------
  // Endpoints (docs/upstream.md). Async, so a rejected argument is a rejected promise
  // like every other failure.

  async health(init?: CallInit): Promise<schemas.UpstreamHealth> {
    return this.#call(
      {
        endpoint: 'GET /health',
        method: 'GET',
        path: '/health',
        schema: schemas.upstreamHealth,
        notFoundCode: 'upstream_unavailable',
      },
      init,
    );
  }

  async orderBook(marketId: string, init?: CallInit): Promise<schemas.OrderBook> {
    const endpoint = 'GET /clob/orderbook';
    return this.#call(
      {
        endpoint,
        method: 'GET',
        path: '/clob/orderbook',
        query: { market_id: checkMarketId(endpoint, marketId) },
        schema: schemas.orderBook,
      },
      init,
    );
  }

  /**
   * A POST, but a read-only query: retried like a GET (see #call). One entry per requested market.
   */
  async clobPrices(marketIds: string[], init?: CallInit): Promise<schemas.ClobPriceBatchResponse> {
    const endpoint = 'POST /clob/market-prices/batch';
    return this.#call(
      {
        endpoint,
        method: 'POST',
        path: '/clob/market-prices/batch',
        body: { market_ids: checkMarketIds(endpoint, marketIds) },
        schema: schemas.clobPriceBatchResponse,
        notFoundCode: 'upstream_unavailable',
      },
      init,
    );
  }

  async markets(query: MarketsQuery = {}, init?: CallInit): Promise<schemas.MarketsResponse> {
    const endpoint = 'GET /api/markets';
    const tokenId = query.tokenId === undefined ? undefined : checkTokenId(endpoint, query.tokenId);
    return this.#call(
      {
        endpoint,
        method: 'GET',
        path: '/api/markets',
        query: {
          limit: query.limit,
          offset: query.offset,
          sortBy: query.sortBy,
          statusFilter: query.statusFilter,
          timeFilter: query.timeFilter,
          tokenId,
        },
        schema: schemas.marketsResponse,
        notFoundCode: 'upstream_unavailable',
      },
      init,
    );
  }

  /** `idOrExchangeAddress`: a market UUID or its exchange address (hex). */
  async market(idOrExchangeAddress: string, init?: CallInit): Promise<schemas.MarketResponse> {
    const endpoint = 'GET /api/markets/:id';
    const id = checkMarketIdOrAddress(endpoint, idOrExchangeAddress);
    return this.#call(
      { endpoint, method: 'GET', path: `/api/markets/${id}`, schema: schemas.marketResponse },
      init,
    );
  }

  async marketHistory(
    marketId: string,
    query: { interval?: HistoryInterval } = {},
    init?: CallInit,
  ): Promise<schemas.HistoryResponse> {
    const endpoint = 'GET /api/markets/:id/history';
    return this.#call(
      {
        endpoint,
        method: 'GET',
        path: `/api/markets/${checkMarketId(endpoint, marketId)}/history`,
        query: { interval: query.interval },
        schema: schemas.historyResponse,
      },
      init,
    );
  }

  async marketHolders(
    marketId: string,
    query: HoldersQuery,
    init?: CallInit,
  ): Promise<schemas.HoldersResponse> {
    const endpoint = 'GET /api/markets/:id/holders';
    return this.#call(
      {
        endpoint,
        method: 'GET',
        path: `/api/markets/${checkMarketId(endpoint, marketId)}/holders`,
        query: { type: query.type, limit: query.limit, offset: query.offset },
        schema: schemas.holdersResponse,
      },
      init,
    );
  }

  async marketComments(
    marketId: string,
    query: PageQuery = {},
    init?: CallInit,
  ): Promise<schemas.CommentsResponse> {
    const endpoint = 'GET /api/markets/:id/comments';
    return this.#call(
      {
        endpoint,
        method: 'GET',
        path: `/api/markets/${checkMarketId(endpoint, marketId)}/comments`,
        query: { limit: query.limit, offset: query.offset },
        schema: schemas.commentsResponse,
      },
      init,
    );
  }

  async marketActivity(
    marketId: string,
    query: PageQuery = {},
    init?: CallInit,
  ): Promise<schemas.MarketActivityResponse> {
    const endpoint = 'GET /api/markets/:id/activity';
    return this.#call(
      {
        endpoint,
        method: 'GET',
        path: `/api/markets/${checkMarketId(endpoint, marketId)}/activity`,
        query: { limit: query.limit, offset: query.offset },
        schema: schemas.marketActivityResponse,
      },
      init,
    );
  }

  async probabilities(init?: CallInit): Promise<schemas.ProbabilitiesResponse> {
    return this.#call(
      {
        endpoint: 'GET /api/markets/probabilities',
        method: 'GET',
        path: '/api/markets/probabilities',
        schema: schemas.probabilitiesResponse,
        notFoundCode: 'upstream_unavailable',
      },
      init,
    );
  }

  async search(q: string, init?: CallInit): Promise<schemas.SearchResponse> {
    return this.#call(
      {
        endpoint: 'GET /api/search',
        method: 'GET',
        path: '/api/search',
        query: { q },
        schema: schemas.searchResponse,
        notFoundCode: 'upstream_unavailable',
      },
      init,
    );
  }

  async tokens(query: { query?: string } = {}, init?: CallInit): Promise<schemas.TokensResponse> {
    return this.#call(
      {
        endpoint: 'GET /api/tokens',
        method: 'GET',
        path: '/api/tokens',
        query: { query: query.query },
        schema: schemas.tokensResponse,
        notFoundCode: 'upstream_unavailable',
      },
      init,
    );
  }

  async token(id: number | string, init?: CallInit): Promise<schemas.TokenResponse> {
    const endpoint = 'GET /api/tokens/:id';
    return this.#call(
      {
        endpoint,
        method: 'GET',
        path: `/api/tokens/${checkTokenId(endpoint, id)}`,
        schema: schemas.tokenResponse,
        notFoundCode: 'bad_request',
      },
      init,
    );
  }

  async tokenPrice(feedId: string, init?: CallInit): Promise<schemas.TokenPriceResponse> {
    const endpoint = 'GET /api/tokens/price/:feedId';
    return this.#call(
      {
        endpoint,
        method: 'GET',
        path: `/api/tokens/price/${checkFeedId(endpoint, feedId)}`,
        schema: schemas.tokenPriceResponse,
        notFoundCode: 'bad_request',
      },
      init,
    );
  }

  async user(username: string, init?: CallInit): Promise<schemas.UserResponse> {
    return this.#userCall('', username, {}, schemas.userResponse, init);
  }

  async userProfile(
    username: string,
    query: IncludeClosedQuery = {},
    init?: CallInit,
  ): Promise<schemas.UserProfileResponse> {
    return this.#userCall(
      '/profile',
      username,
      { include_closed: query.includeClosed },
      schemas.userProfileResponse,
      init,
    );
  }

  async userStats(username: string, init?: CallInit): Promise<schemas.UserStatsResponse> {
    return this.#userCall('/stats', username, {}, schemas.userStatsResponse, init);
  }

  async userPositions(
    username: string,
    query: IncludeClosedQuery = {},
    init?: CallInit,
  ): Promise<schemas.UserPositionsResponse> {
    return this.#userCall(
      '/positions',
      username,
      { include_closed: query.includeClosed },
      schemas.userPositionsResponse,
      init,
    );
  }

  async userActivity(username: string, init?: CallInit): Promise<schemas.UserActivityResponse> {
    return this.#userCall('/activity', username, {}, schemas.userActivityResponse, init);
  }

  async netWorthHistory(
    username: string,
    query: { days?: number } = {},
    init?: CallInit,
  ): Promise<schemas.NetWorthHistoryResponse> {
    return this.#userCall(
      '/net-worth-history',
      username,
      { days: query.days },
      schemas.netWorthHistoryResponse,
      init,
    );
  }

  async rewardsProgram(init?: CallInit): Promise<schemas.RewardsProgramResponse> {
    return this.#call(
      {
        endpoint: 'GET /api/rewards/program',
        method: 'GET',
        path: '/api/rewards/program',
        schema: schemas.rewardsProgramResponse,
        notFoundCode: 'upstream_unavailable',
      },
      init,
    );
  }

  async rewardsLeaderboard(
    query: LeaderboardQuery = {},
    init?: CallInit,
  ): Promise<schemas.LeaderboardResponse> {
    return this.#call(
      {
        endpoint: 'GET /api/rewards/leaderboard',
        method: 'GET',
        path: '/api/rewards/leaderboard',
        query: { limit: query.limit, from: query.from, to: query.to },
        schema: schemas.leaderboardResponse,
        notFoundCode: 'upstream_unavailable',
      },
      init,
    );
  }

  async rewardsEpochs(query: EpochsQuery = {}, init?: CallInit): Promise<schemas.EpochsResponse> {
    return this.#call(
      {
        endpoint: 'GET /api/rewards/epochs',
        method: 'GET',
        path: '/api/rewards/epochs',
        query: { limit: query.limit, status: query.status },
        schema: schemas.epochsResponse,
        notFoundCode: 'upstream_unavailable',
      },
      init,
    );
  }

  async marketData(marketId: string, init?: CallInit): Promise<schemas.MarketDataSnapshot> {
    const endpoint = 'GET /api/market-data/:marketId';
    return this.#call(
      {
        endpoint,
        method: 'GET',
        path: `/api/market-data/${checkMarketId(endpoint, marketId)}`,
        schema: schemas.marketDataSnapshot,
      },
      init,
    );
  }

  /**
   * A POST, but a read-only query: retried like a GET. Its maximum list size is not shown upstream
   * (docs/upstream.md); the CLOB batch's 100 is applied so the relay never depends on an unknown limit.
   */
  async marketDataBatch(marketIds: string[], init?: CallInit): Promise<schemas.MarketDataBatchResponse> {
    const endpoint = 'POST /api/market-data/batch';
    return this.#call(
      {
        endpoint,
        method: 'POST',
        path: '/api/market-data/batch',
        body: { market_ids: checkMarketIds(endpoint, marketIds) },
        schema: schemas.marketDataBatchResponse,
        notFoundCode: 'upstream_unavailable',
      },
      init,
    );
  }

  // -------------------------------------------------------------------------------------------
  // Transport

  #userCall<T>(
    suffix: string,
    username: string,
    query: Record<string, QueryValue>,
    schema: z.ZodType<T>,
    init: CallInit | undefined,
  ): Promise<T> {
    const endpoint = `GET /api/users/:username${suffix}`;
    return this.#call(
      {
        endpoint,
        method: 'GET',
        path: `/api/users/${checkPathSegment(endpoint, 'username', username)}${suffix}`,
        query,
        schema,
        notFoundCode: 'bad_request',
      },
      init,
    );
  }

  /**
   * Every public endpoint is a read, including the two batch POSTs (they query prices and change
   * nothing), so every call is idempotent and gets the same retry policy: network errors, timeouts
   * and 5xx are retried with backoff, a 429 after its Retry-After; other 4xx and schema errors are
   * final. A write endpoint added later must not go through this loop unchanged.
   */
  async #call<T>(route: Route<T>, init: CallInit | undefined): Promise<T> {
    const call = linkSignals([init?.signal, this.#closing.signal]);
    try {
      for (let attempt = 1; ; attempt++) {
        const result = await this.#attempt(route, attempt, call.signal);
        if (result.ok) return result.value;
        if (!result.retryable || attempt > this.#retries) throw result.error;
        const waitMs = result.retryAfterMs ?? backoffDelayMs(attempt, this.#retryBaseMs, RETRY_CAP_MS);
        await delay(waitMs, undefined, { signal: call.signal });
      }
    } catch (error) {
      // The caller's abort wins over whatever it interrupted; shutdown gives a typed error.
      if (init?.signal?.aborted) throw init.signal.reason;
      if (this.#closing.signal.aborted) {
        throw new UpstreamError(route.endpoint, 'upstream client closed', { cause: error });
      }
      throw error;
    } finally {
      call.dispose();
    }
  }

  /** One attempt: waits for a concurrency slot, then a rate token, so retries are budgeted too. */
  async #attempt<T>(route: Route<T>, attempt: number, signal: AbortSignal): Promise<AttemptResult<T>> {
    this.#queued++;
    let waiting = true;
    const stopWaiting = (): void => {
      if (waiting) {
        waiting = false;
        this.#queued--;
      }
    };
    try {
      const run = this.#limit(async () => {
        signal.throwIfAborted();
        const waitMs = this.#bucket.reserve();
        if (waitMs > 0) {
          try {
            await delay(waitMs, undefined, { signal });
          } catch (error) {
            this.#bucket.refund();
            throw error;
          }
        }
        stopWaiting();
        this.#inFlight++;
        try {
          return await this.#send(route, attempt, signal);
        } finally {
          this.#inFlight--;
        }
      });
      return await raceAbort(run, signal);
    } finally {
      stopWaiting();
    }
  }

  async #send<T>(route: Route<T>, attempt: number, callSignal: AbortSignal): Promise<AttemptResult<T>> {
    const attemptSignal = linkSignals([callSignal], this.#timeoutMs);
    const startedAt = performance.now();
    const report = (outcome: Outcome, status?: number): void => {
      this.events.emit('request', {
        endpoint: route.endpoint,
        outcome,
        status,
        durationMs: performance.now() - startedAt,
        attempt,
      });
    };
    try {
      let status: number;
      let retryAfter: string | undefined;
      let text: string;
      try {
        const response = await this.#pool.request({
          method: route.method,
          path: this.#pathPrefix + route.path + queryString(route.query),
          headers:
            route.body === undefined
              ? { accept: 'application/json' }
              : { accept: 'application/json', 'content-type': 'application/json' },
          body: route.body === undefined ? undefined : JSON.stringify(route.body),
          signal: attemptSignal.signal,
        });
        status = response.statusCode;
        retryAfter = firstHeader(response.headers['retry-after']);
        // Always consumed, on errors too: undici keeps the connection busy until the body is read.
        text = await response.body.text();
      } catch (cause) {
        if (callSignal.aborted) throw cause;
        const timedOut = attemptSignal.signal.aborted || isUndiciTimeout(cause);
        report(timedOut ? 'timeout' : 'network_error');
        const error = timedOut
          ? new UpstreamTimeoutError(route.endpoint, `no answer within ${this.#timeoutMs} ms`, { cause })
          : new UpstreamNetworkError(route.endpoint, describeNetworkError(cause), { cause });
        return { ok: false, error, retryable: true };
      }

      if (status >= 200 && status < 300) return this.#validate(route, text, status, report);

      const error = new UpstreamHttpError(route.endpoint, status, {
        detail: upstreamErrorText(text),
        code: status === 404 ? route.notFoundCode : undefined,
      });
      if (status === 429) {
        report('rate_limited', status);
        return {
          ok: false,
          error,
          retryable: true,
          retryAfterMs: retryAfterMs(retryAfter, Date.now(), this.#maxRetryAfterMs),
        };
      }
      report('http_error', status);
      return { ok: false, error, retryable: status >= 500 };
    } finally {
      attemptSignal.dispose();
    }
  }

  #validate<T>(
    route: Route<T>,
    text: string,
    status: number,
    report: (outcome: Outcome, status?: number) => void,
  ): AttemptResult<T> {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (cause) {
      report('schema_error', status);
      const error = new UpstreamSchemaError(route.endpoint, [{ path: '', message: 'invalid JSON' }], {
        cause,
      });
      return { ok: false, error, retryable: false };
    }
    const parsed = route.schema.safeParse(json);
    if (!parsed.success) {
      report('schema_error', status);
      const issues: SchemaIssue[] = parsed.error.issues.map((issue) => ({
        path: issue.path.map(String).join('.'),
        message: issue.message,
      }));
      return { ok: false, error: new UpstreamSchemaError(route.endpoint, issues), retryable: false };
    }
    report('ok', status);
    return { ok: true, value: parsed.data };
  }
}

// ---------------------------------------------------------------------------------------------
// HTTP helpers

function queryString(query: Record<string, QueryValue> | undefined): string {
  if (query === undefined) return '';
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined) params.append(key, String(value));
  }
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

const UNDICI_TIMEOUT_CODES = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  return typeof error.code === 'string' ? error.code : undefined;
}

function isUndiciTimeout(error: unknown): boolean {
  const code = errorCode(error);
  return code !== undefined && UNDICI_TIMEOUT_CODES.has(code);
}

function describeNetworkError(error: unknown): string {
  const code = errorCode(error);
  const message = error instanceof Error ? error.message : String(error);
  return code === undefined || message.includes(code) ? message : `${code}: ${message}`;
}

/** The error body's shape is not shown upstream; the simulator's `{success:false,error}` is used when present. */
function upstreamErrorText(text: string): string | undefined {
  try {
    const parsed = schemas.errorBody.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data.error.slice(0, 200) : undefined;
  } catch {
    return undefined;
  }
}
