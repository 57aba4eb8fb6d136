/**
 * @module test/sim/endpoints
 * Every public endpoint of docs/upstream.md, straight over HTTP, validated with its
 * schema from upstream/schemas.ts, and consistent with the simulation's state.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimMarket } from '../../src/sim/market.ts';
import {
  epochsResponse,
  leaderboardResponse,
  netWorthHistoryResponse,
  rewardsProgramResponse,
  userActivityResponse,
  userPositionsResponse,
  userProfileResponse,
  userResponse,
  userStatsResponse,
} from '../../src/upstream/account-schemas.ts';
import {
  clobPriceBatchResponse,
  commentsResponse,
  historyResponse,
  holdersResponse,
  marketActivityResponse,
  marketDataBatchResponse,
  marketDataSnapshot,
  marketResponse,
  marketsResponse,
  orderBook,
  probabilitiesResponse,
  searchResponse,
  tokenPriceResponse,
  tokenResponse,
  tokensResponse,
  upstreamHealth,
} from '../../src/upstream/schemas.ts';
import { getJson, postJson, type SimFixture, START, startFixture } from './sim-fixture.ts';

let fixture: SimFixture;
let active: SimMarket;
let username: string;

beforeAll(async () => {
  fixture = await startFixture();
  for (let n = 0; n < 5; n++) {
    fixture.clock.advance(250);
    fixture.sim.tick();
  }
  active = fixture.sim.market.markets().find((market) => market.status === 'ACTIVE' && !market.oneSided)!;
  username = fixture.sim.market.users[0]!.username;
});
afterAll(async () => {
  await fixture.sim.close();
});

const get = (path: string) => getJson(fixture.sim, path);

describe('simulator endpoints match the upstream schemas', () => {
  it('GET /health', async () => {
    const { status, body } = await get('/health');
    expect(status).toBe(200);
    expect(upstreamHealth.parse(body).timestamp).toBe(new Date(START + 1_250).toISOString());
  });

  it('GET /clob/orderbook', async () => {
    const { status, body } = await get(`/clob/orderbook?market_id=${active.id}`);
    expect(status).toBe(200);
    expect(orderBook.parse(body)).toEqual(fixture.sim.market.orderBook(active.id));
  });

  it('POST /clob/market-prices/batch: one entry per market, consistent with the book', async () => {
    const ids = fixture.sim.market.marketIds();
    const { status, body } = await postJson(fixture.sim, '/clob/market-prices/batch', { market_ids: ids });
    expect(status).toBe(200);
    const { data } = clobPriceBatchResponse.parse(body);
    expect(data.map((entry) => entry.market_id)).toEqual(ids);
    const entry = data.find((candidate) => candidate.market_id === active.id)!;
    const book = fixture.sim.market.orderBook(active.id)!;
    expect(entry.best_bid).toBe(book.bids[0]!.price);
    expect(entry.best_ask).toBe(book.asks[0]!.price);
    expect(entry.last_price).toBe(book.last_price);
    const without = data.find((candidate) =>
      fixture.sim.market.marketIdsWithoutPriceData().includes(candidate.market_id),
    )!;
    expect(Object.keys(without).sort()).toEqual(['market_id', 'timestamp']);
  });

  it('GET /api/markets with defaults', async () => {
    const { status, body } = await get('/api/markets');
    expect(status).toBe(200);
    const parsed = marketsResponse.parse(body);
    expect(parsed.markets).toHaveLength(20);
    expect(parsed.pagination).toEqual({ total: 50, limit: 20, offset: 0, hasMore: true });
    const volumes = parsed.markets.map((market) => market.volume);
    expect(volumes).toEqual([...volumes].sort((a, b) => b - a));
  });

  it('GET /api/markets filters by status, time window and token, and sorts', async () => {
    const expired = marketsResponse.parse((await get('/api/markets?statusFilter=expired&limit=100')).body);
    expect(expired.markets.length).toBeGreaterThan(0);
    expect(expired.markets.every((market) => market.status === 'EXPIRED')).toBe(true);
    const resolved = marketsResponse.parse((await get('/api/markets?statusFilter=resolved')).body);
    expect(resolved.markets.every((market) => market.status === 'RESOLVED')).toBe(true);
    const soon = marketsResponse.parse(
      (await get('/api/markets?timeFilter=week&sortBy=ending_soon&limit=100')).body,
    );
    const expiries = soon.markets.map((market) => Date.parse(market.expiration_timestamp));
    expect(expiries).toEqual([...expiries].sort((a, b) => a - b));
    expect(expiries.every((at) => at > START && at <= START + 7 * 86_400_000 + 10_000)).toBe(true);
    const byToken = marketsResponse.parse((await get('/api/markets?tokenId=1&limit=100')).body);
    expect(byToken.markets.length).toBeGreaterThan(0);
    expect(byToken.markets.every((market) => market.title.includes('BTC'))).toBe(true);
    const newest = marketsResponse.parse((await get('/api/markets?sortBy=newest')).body);
    expect(newest.pagination.total).toBe(50);
  });

  it('GET /api/markets/:id by UUID and by exchange address', async () => {
    const byId = marketResponse.parse((await get(`/api/markets/${active.id}`)).body);
    const byAddress = marketResponse.parse((await get(`/api/markets/${active.exchangeAddress}`)).body);
    expect(byAddress).toEqual(byId);
    expect(byId.market.oracle_feed_id).toBe(active.token.oracleFeedId);
  });

  it('GET /api/markets/:id/history for every interval', async () => {
    for (const interval of ['1h', '24h', '7d', '30d', 'all', undefined]) {
      const query = interval ? `?interval=${interval}` : '';
      const { status, body } = await get(`/api/markets/${active.id}/history${query}`);
      expect(status).toBe(200);
      const { history } = historyResponse.parse(body);
      expect(history.length).toBeGreaterThan(1);
      const times = history.map((point) => Date.parse(point.time));
      expect(times).toEqual([...times].sort((a, b) => a - b));
    }
  });

  it('GET /api/markets/:id/holders for YES and NO', async () => {
    for (const type of ['YES', 'NO']) {
      const parsed = holdersResponse.parse(
        (await get(`/api/markets/${active.id}/holders?type=${type}`)).body,
      );
      expect(parsed.type).toBe(type);
      expect(parsed.pagination.total).toBe(parsed.holders.length);
    }
  });

  it('GET /api/markets/:id/comments with one level of replies', async () => {
    const parsed = commentsResponse.parse((await get(`/api/markets/${active.id}/comments`)).body);
    for (const comment of parsed.comments) {
      expect(comment.depth).toBe(0);
      for (const reply of comment.replies) expect(reply).not.toHaveProperty('replies');
    }
  });

  it('GET /api/markets/:id/activity lists trades newest first with exact totals', async () => {
    const parsed = marketActivityResponse.parse(
      (await get(`/api/markets/${active.id}/activity?limit=100`)).body,
    );
    expect(parsed.activity.length).toBeGreaterThan(0);
    expect(parsed.pagination).not.toHaveProperty('total');
    const times = parsed.activity.map((entry) => Date.parse(entry.activity_timestamp));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    const [first] = parsed.activity;
    expect(first!.activity_type).toBe('TRADE');
    expect(first!.price).toBe(fixture.sim.market.orderBook(active.id)!.last_price);
  });

  it('GET /api/markets/probabilities maps market ids to entries that agree with the book', async () => {
    const { probabilities } = probabilitiesResponse.parse((await get('/api/markets/probabilities')).body);
    const book = fixture.sim.market.orderBook(active.id)!;
    expect(probabilities[active.id]!.best_bid).toBe(Number(book.bids[0]!.price));
    for (const id of fixture.sim.market.marketIdsWithoutPriceData())
      expect(probabilities[id]).toBeUndefined();
  });

  it('GET /api/search', async () => {
    const parsed = searchResponse.parse((await get(`/api/search?q=${active.token.symbol}`)).body);
    expect(parsed.results.markets.some((market) => market.market_id === active.id)).toBe(true);
    expect(parsed.results.tokens.map((token) => token.symbol)).toContain(active.token.symbol);
    const byUser = searchResponse.parse((await get(`/api/search?q=${username}`)).body);
    expect(byUser.results.users.map((user) => user.username)).toContain(username);
  });

  it('GET /api/tokens, /api/tokens/:id, /api/tokens/price/:feedId', async () => {
    const all = tokensResponse.parse((await get('/api/tokens')).body);
    expect(all.tokens.length).toBeGreaterThan(5);
    const filtered = tokensResponse.parse((await get('/api/tokens?query=bitcoin')).body);
    expect(filtered.tokens.map((token) => token.symbol)).toEqual(['BTC']);
    const detail = tokenResponse.parse((await get('/api/tokens/1')).body);
    expect(detail.token.symbol).toBe('BTC');
    const price = tokenPriceResponse.parse(
      (await get(`/api/tokens/price/${detail.token.oracle_feed_id}`)).body,
    );
    expect(price.price).toBe(Number(price.raw_price) * 10 ** price.expo);
  });

  it('GET /api/users/:username and its sub-resources', async () => {
    const base = `/api/users/${username}`;
    expect(userResponse.parse((await get(base)).body).user.username).toBe(username);
    const profile = userProfileResponse.parse((await get(`${base}/profile?include_closed=true`)).body);
    expect(profile.positions.length).toBeGreaterThan(0);
    userStatsResponse.parse((await get(`${base}/stats`)).body);
    const positions = userPositionsResponse.parse((await get(`${base}/positions?include_closed=1`)).body);
    expect(positions.positions.length).toBe(profile.positions.length);
    userActivityResponse.parse((await get(`${base}/activity`)).body);
    const worth = netWorthHistoryResponse.parse((await get(`${base}/net-worth-history`)).body);
    expect(worth.data).toHaveLength(30);
    expect(worth.summary.current_value).toBe(worth.data[29]!.total_value);
  });

  it('GET /api/rewards/program, leaderboard, epochs', async () => {
    rewardsProgramResponse.parse((await get('/api/rewards/program')).body);
    const board = leaderboardResponse.parse((await get('/api/rewards/leaderboard')).body);
    expect(board.leaderboard.length).toBeGreaterThan(0);
    expect(board.leaderboard.length).toBeLessThanOrEqual(25);
    const epochs = epochsResponse.parse((await get('/api/rewards/epochs')).body);
    expect(epochs.epochs).toHaveLength(30);
    expect(epochs.epochs[0]!.status).toBe('OPEN');
    const paid = epochsResponse.parse((await get('/api/rewards/epochs?status=PAID&limit=3')).body);
    expect(paid.epochs.map((epoch) => epoch.status)).toEqual(['PAID', 'PAID', 'PAID']);
  });

  it('GET /api/market-data/:marketId and POST /api/market-data/batch', async () => {
    const single = marketDataSnapshot.parse((await get(`/api/market-data/${active.id}`)).body);
    expect(single.best_bid).toBe(fixture.sim.market.orderBook(active.id)!.bids[0]!.price);
    const ids = fixture.sim.market.marketIds();
    const batch = marketDataBatchResponse.parse(
      (await postJson(fixture.sim, '/api/market-data/batch', { market_ids: ids })).body,
    );
    const withoutData = fixture.sim.market.marketIdsWithoutPriceData();
    expect(batch.data.map((entry) => entry.market_id)).not.toContain(withoutData[0]);
    expect(batch.data.map((entry) => entry.market_id)).toContain(active.id);
  });
});
