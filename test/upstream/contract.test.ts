/**
 * Contract between the simulator and the client: every client method against a live simulator.
 * The client validates each body with upstream/schemas.ts, so any drift between what the
 * simulator serves and the schemas fails here, naming the endpoint and the field.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator } from '../../src/sim/server.ts';
import { UpstreamClient } from '../../src/upstream/client.ts';
import { UpstreamHttpError } from '../../src/upstream/errors.ts';

let sim: Awaited<ReturnType<typeof startSimulator>>;
let client: UpstreamClient;
let marketIds: string[];

beforeAll(async () => {
  sim = await startSimulator({ port: 0, markets: 5, seed: 7 });
  client = new UpstreamClient({ baseUrl: sim.url, retries: 0 });
  marketIds = sim.market.marketIds();
});

afterAll(async () => {
  await client?.close();
  await sim?.close();
});

function firstMarket(): string {
  const id = marketIds[0];
  if (id === undefined) throw new Error('simulator has no markets');
  return id;
}

/** A username the simulator knows, found through the client's own public endpoints. */
async function someUsername(): Promise<string> {
  const candidates = [
    ...(await client.search('')).results.users.map((u) => u.username),
    ...(await client.rewardsLeaderboard()).leaderboard.map((entry) => entry.username),
    ...(await client.marketHolders(firstMarket(), { type: 'YES' })).holders.map((h) => h.username),
    ...(await client.marketHolders(firstMarket(), { type: 'NO' })).holders.map((h) => h.username),
  ];
  const username = candidates[0];
  if (username === undefined) throw new Error('no username found via search, leaderboard or holders');
  return username;
}

async function someToken(): Promise<{ id: number; oracle_feed_id: string }> {
  const token = (await client.tokens()).tokens[0];
  if (token === undefined) throw new Error('GET /api/tokens returned no tokens');
  return token;
}

describe('simulator honours the client contract', () => {
  it('has markets', () => {
    expect(marketIds.length).toBe(5);
  });

  it('health', async () => {
    await expect(client.health()).resolves.toBeDefined();
  });

  it('orderBook', async () => {
    const book = await client.orderBook(firstMarket());
    expect(book.market_id).toBe(firstMarket());
  });

  it('orderBook of an unknown market is 404 unknown_market', async () => {
    const error = await client.orderBook('00000000-0000-4000-8000-000000000000').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamHttpError);
    expect(error).toMatchObject({ status: 404, code: 'unknown_market' });
  });

  it('clobPrices: one entry per requested market', async () => {
    const { data } = await client.clobPrices(marketIds);
    expect(data.map((snapshot) => snapshot.market_id).sort()).toEqual([...marketIds].sort());
  });

  it('markets, with every filter', async () => {
    const page = await client.markets({ limit: 100 });
    expect(page.markets.map((m) => m.market_id).sort()).toEqual(
      expect.arrayContaining([...marketIds].sort()),
    );
    await client.markets({ limit: 2, offset: 1, sortBy: 'volume', statusFilter: 'all', timeFilter: 'all' });
    await client.markets({ sortBy: 'newest', statusFilter: 'active', timeFilter: '24h' });
    await client.markets({ sortBy: 'ending_soon', statusFilter: 'expired', timeFilter: 'week' });
  });

  it('market, by id and by exchange address', async () => {
    const { market } = await client.market(firstMarket());
    expect(market.market_id).toBe(firstMarket());
    const byAddress = await client.market(market.exchange_address);
    expect(byAddress.market.market_id).toBe(firstMarket());
  });

  it('marketHistory', async () => {
    await expect(client.marketHistory(firstMarket())).resolves.toBeDefined();
    await expect(client.marketHistory(firstMarket(), { interval: '24h' })).resolves.toBeDefined();
  });

  it('marketHolders', async () => {
    const holders = await client.marketHolders(firstMarket(), { type: 'NO', limit: 5, offset: 0 });
    expect(holders.type).toBe('NO');
  });

  it('marketComments', async () => {
    await expect(client.marketComments(firstMarket(), { limit: 10 })).resolves.toBeDefined();
  });

  it('marketActivity', async () => {
    await expect(client.marketActivity(firstMarket(), { limit: 10 })).resolves.toBeDefined();
  });

  it('probabilities', async () => {
    const { probabilities } = await client.probabilities();
    // A market without a two-sided quote has no entry (the simulator's choice; the page is silent).
    expect(Object.keys(probabilities).length).toBeGreaterThan(0);
    for (const id of Object.keys(probabilities)) expect(marketIds).toContain(id);
  });

  it('search', async () => {
    const { market } = await client.market(firstMarket());
    await expect(client.search(market.title.slice(0, 5))).resolves.toBeDefined();
  });

  it('tokens, token, tokenPrice', async () => {
    const token = await someToken();
    await expect(client.tokens({ query: 'a' })).resolves.toBeDefined();
    expect((await client.token(token.id)).token.id).toBe(token.id);
    expect((await client.tokenPrice(token.oracle_feed_id)).feed_id).toBe(token.oracle_feed_id);
  });

  it('user endpoints', async () => {
    const username = await someUsername();
    expect((await client.user(username)).user.username).toBe(username);
    await expect(client.userProfile(username, { includeClosed: true })).resolves.toBeDefined();
    await expect(client.userStats(username)).resolves.toBeDefined();
    await expect(client.userPositions(username)).resolves.toBeDefined();
    await expect(client.userActivity(username)).resolves.toBeDefined();
    await expect(client.netWorthHistory(username, { days: 7 })).resolves.toBeDefined();
  });

  it('rewards endpoints', async () => {
    await expect(client.rewardsProgram()).resolves.toBeDefined();
    await expect(client.rewardsLeaderboard({ limit: 5 })).resolves.toBeDefined();
    await expect(client.rewardsEpochs({ limit: 5, status: 'PAID' })).resolves.toBeDefined();
  });

  it('marketData and marketDataBatch', async () => {
    expect((await client.marketData(firstMarket())).market_id).toBe(firstMarket());
    // Unlike the CLOB batch, the page does not promise an entry per requested market.
    const { data } = await client.marketDataBatch(marketIds);
    for (const snapshot of data) expect(marketIds).toContain(snapshot.market_id);
  });
});
