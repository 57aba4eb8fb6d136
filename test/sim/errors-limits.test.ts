/**
 * @module test/sim/errors-limits
 * Errors (docs/upstream.md) and limits of the simulator, plus the choices of
 * docs/upstream.md where upstream documents nothing: error body shape, 404s on /api, caps.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { leaderboardResponse, netWorthHistoryResponse } from '../../src/upstream/account-schemas.ts';
import {
  commentsResponse,
  holdersResponse,
  marketActivityResponse,
  marketsResponse,
} from '../../src/upstream/schemas.ts';
import { errorBody, getJson, postJson, type SimFixture, startFixture } from './sim-fixture.ts';

let fixture: SimFixture;
let firstId: string;
let username: string;
const UNKNOWN = '00000000-0000-4000-8000-000000000000';

beforeAll(async () => {
  fixture = await startFixture();
  firstId = fixture.sim.market.marketIds()[0]!;
  username = fixture.sim.market.users[0]!.username;
});
afterAll(async () => {
  await fixture.sim.close();
});

const get = (path: string) => getJson(fixture.sim, path);

async function expectError(
  pending: Promise<{ status: number; body: unknown }>,
  status: number,
): Promise<string> {
  const response = await pending;
  expect(response.status).toBe(status);
  return errorBody.parse(response.body).error;
}

describe('GET /clob/orderbook errors', () => {
  it('400 when market_id is missing', async () => {
    expect(await expectError(get('/clob/orderbook'), 400)).toMatch(/required/);
    expect(await expectError(get('/clob/orderbook?market_id='), 400)).toMatch(/required/);
  });

  it('400 when market_id is not a UUID', async () => {
    expect(await expectError(get('/clob/orderbook?market_id=abc'), 400)).toMatch(/UUID/);
  });

  it('404 for an unknown market, and for a removed one', async () => {
    await expectError(get(`/clob/orderbook?market_id=${UNKNOWN}`), 404);
    const { sim } = await startFixture({ markets: 3 });
    try {
      const id = sim.market.marketIds()[2]!;
      expect((await getJson(sim, `/clob/orderbook?market_id=${id}`)).status).toBe(200);
      sim.market.removeMarket(id);
      await expectError(getJson(sim, `/clob/orderbook?market_id=${id}`), 404);
      await expectError(getJson(sim, `/api/markets/${id}`), 404);
      const batch = await postJson(sim, '/clob/market-prices/batch', { market_ids: [id] });
      expect(batch.body).toEqual({ data: [] });
    } finally {
      await sim.close();
    }
  });
});

describe('POST /clob/market-prices/batch errors and limit', () => {
  const post = (body: unknown) => postJson(fixture.sim, '/clob/market-prices/batch', body);
  const uuids = (count: number) =>
    Array.from({ length: count }, (_, n) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`);

  it('400 for a body that is not JSON, not an object, or has no list', async () => {
    await expectError(post('{"market_ids": ['), 400);
    await expectError(post('[]'), 400);
    await expectError(post({}), 400);
    await expectError(post({ market_ids: 'x' }), 400);
    await expectError(getJson(fixture.sim, '/clob/market-prices/batch', { method: 'POST' }), 400);
  });

  it('400 for an empty list', async () => {
    expect(await expectError(post({ market_ids: [] }), 400)).toMatch(/empty/);
  });

  it('accepts 100 ids, 400 for 101', async () => {
    expect((await post({ market_ids: uuids(100) })).status).toBe(200);
    expect(await expectError(post({ market_ids: uuids(101) }), 400)).toMatch(/100/);
  });

  it('400 for a non-UUID item', async () => {
    await expectError(post({ market_ids: [firstId, 'nope'] }), 400);
    await expectError(post({ market_ids: [firstId, 7] }), 400);
  });

  it('the market data batch validates the same way', async () => {
    await expectError(postJson(fixture.sim, '/api/market-data/batch', { market_ids: [] }), 400);
    await expectError(postJson(fixture.sim, '/api/market-data/batch', { market_ids: uuids(101) }), 400);
  });
});

describe('/api errors (docs/upstream.md choices)', () => {
  it('404 for an unknown market, user, token, feed or path', async () => {
    await expectError(get(`/api/markets/${UNKNOWN}`), 404);
    await expectError(get(`/api/markets/${UNKNOWN}/history`), 404);
    await expectError(get(`/api/markets/${UNKNOWN}/holders?type=YES`), 404);
    await expectError(get(`/api/markets/${UNKNOWN}/comments`), 404);
    await expectError(get(`/api/markets/${UNKNOWN}/activity`), 404);
    await expectError(get(`/api/market-data/${UNKNOWN}`), 404);
    await expectError(get('/api/users/nobody_here'), 404);
    await expectError(get('/api/users/nobody_here/net-worth-history'), 404);
    await expectError(get('/api/tokens/999'), 404);
    await expectError(get(`/api/tokens/price/0x${'0'.repeat(64)}`), 404);
    await expectError(get('/api/nothing'), 404);
  });

  it('404 for the market data of a market without price data', async () => {
    const id = fixture.sim.market.marketIdsWithoutPriceData()[0]!;
    expect(await expectError(get(`/api/market-data/${id}`), 404)).toMatch(/price data/);
  });

  it('400 for malformed ids and parameters', async () => {
    await expectError(get('/api/markets/not-a-market'), 400);
    await expectError(get('/api/market-data/not-a-uuid'), 400);
    await expectError(get('/api/tokens/abc'), 400);
    await expectError(get('/api/tokens/price/zzz'), 400);
    await expectError(get('/api/markets?sortBy=popular'), 400);
    await expectError(get('/api/markets?statusFilter=open'), 400);
    await expectError(get('/api/markets?timeFilter=2h'), 400);
    await expectError(get('/api/markets?tokenId=btc'), 400);
    await expectError(get(`/api/markets/${firstId}/history?interval=2h`), 400);
    await expectError(get(`/api/users/${username}/positions?include_closed=maybe`), 400);
    await expectError(get('/api/rewards/epochs?status=CLOSED'), 400);
    await expectError(get('/api/rewards/leaderboard?from=yesterday'), 400);
    await expectError(get('/api/rewards/leaderboard?from=2025-02-01&to=2025-01-01'), 400);
  });

  it('holders: type is required and must be YES or NO', async () => {
    expect(await expectError(get(`/api/markets/${firstId}/holders`), 400)).toMatch(/required/);
    await expectError(get(`/api/markets/${firstId}/holders?type=MAYBE`), 400);
  });

  it('limit and offset: 400 when not a non-negative integer (limit at least 1)', async () => {
    for (const query of ['limit=abc', 'limit=0', 'limit=-1', 'limit=1.5', 'offset=-1', 'offset=x']) {
      await expectError(get(`/api/markets?${query}`), 400);
    }
  });
});

describe('limits and pagination', () => {
  it('markets: default 20, total/hasMore, string limit/offset, cap 100', async () => {
    const page = marketsResponse.parse((await get('/api/markets?limit=15&offset=40')).body);
    expect(page.pagination).toEqual({ total: 50, limit: 15, offset: 40, hasMore: false });
    expect(page.markets).toHaveLength(10);
    const middle = marketsResponse.parse((await get('/api/markets?limit=10&offset=30')).body);
    expect(middle.pagination.hasMore).toBe(true);
    const capped = marketsResponse.parse((await get('/api/markets?limit=1000')).body);
    expect(capped.pagination.limit).toBe(100);
    expect(capped.markets).toHaveLength(50);
    const beyond = marketsResponse.parse((await get('/api/markets?offset=500')).body);
    expect(beyond.markets).toEqual([]);
    expect(beyond.pagination.hasMore).toBe(false);
  });

  it('comments: default 20, max 50, pagination counts top-level comments', async () => {
    // The first market always has 57 top-level comments.
    const first = commentsResponse.parse((await get(`/api/markets/${firstId}/comments`)).body);
    expect(first.comments).toHaveLength(20);
    expect(first.pagination).toEqual({ total: 57, limit: 20, offset: 0, hasMore: true });
    const capped = commentsResponse.parse((await get(`/api/markets/${firstId}/comments?limit=80`)).body);
    expect(capped.comments).toHaveLength(50);
    expect(capped.pagination.limit).toBe(50);
    const last = commentsResponse.parse(
      (await get(`/api/markets/${firstId}/comments?limit=50&offset=50`)).body,
    );
    expect(last.comments).toHaveLength(7);
    expect(last.pagination.hasMore).toBe(false);
  });

  it('activity: default 20, max 100, no total', async () => {
    for (let n = 0; n < 200; n++) fixture.sim.tick();
    const page = marketActivityResponse.parse((await get(`/api/markets/${firstId}/activity`)).body);
    expect(page.activity).toHaveLength(20);
    expect(page.pagination).toEqual({ limit: 20, offset: 0, hasMore: true });
    const capped = marketActivityResponse.parse(
      (await get(`/api/markets/${firstId}/activity?limit=500`)).body,
    );
    expect(capped.activity).toHaveLength(100);
    expect(capped.pagination.limit).toBe(100);
  });

  it('holders: default 20, with total', async () => {
    const page = holdersResponse.parse((await get(`/api/markets/${firstId}/holders?type=YES&limit=1`)).body);
    expect(page.pagination.limit).toBe(1);
    expect(page.pagination.hasMore).toBe(page.pagination.total > 1);
  });

  it('leaderboard: default 25, cap 100', async () => {
    expect(leaderboardResponse.parse((await get('/api/rewards/leaderboard')).body).leaderboard).toHaveLength(
      25,
    );
    const all = leaderboardResponse.parse((await get('/api/rewards/leaderboard?limit=500')).body);
    expect(all.leaderboard.length).toBeLessThanOrEqual(100);
    expect(all.leaderboard.length).toBeGreaterThan(25);
  });

  it('net-worth-history: days default 30, max 365', async () => {
    const capped = netWorthHistoryResponse.parse(
      (await get(`/api/users/${username}/net-worth-history?days=1000`)).body,
    );
    expect(capped.data).toHaveLength(365);
    const week = netWorthHistoryResponse.parse(
      (await get(`/api/users/${username}/net-worth-history?days=7`)).body,
    );
    expect(week.data).toHaveLength(7);
    await expectError(get(`/api/users/${username}/net-worth-history?days=0`), 400);
  });
});
