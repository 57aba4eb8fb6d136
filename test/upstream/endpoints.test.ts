import { afterEach, describe, expect, expectTypeOf, it } from 'vitest';
import { type CallInit, UpstreamClient } from '../../src/upstream/client.ts';
import type { HoldersResponse, OrderBook, UserProfileResponse } from '../../src/upstream/schemas.ts';
import { json, type ScriptedServer, startScriptedServer } from './scripted-server.ts';

const MARKET = '3f2b8c1e-5d4a-4e6f-9a7b-1c2d3e4f5a6b';

let server: ScriptedServer | undefined;
let client: UpstreamClient | undefined;

afterEach(async () => {
  await client?.close();
  await server?.close();
  client = undefined;
  server = undefined;
});

/** A client against a server that answers every request 404, to look at what was sent. */
async function recording(): Promise<{ server: ScriptedServer; client: UpstreamClient }> {
  server = await startScriptedServer((_req, res) => json(res, 404, { success: false, error: 'none' }));
  client = new UpstreamClient({ baseUrl: server.url, retries: 0 });
  return { server, client };
}

describe('methods derived from the endpoint table', () => {
  it('take the row’s arguments, then an optional CallInit, and resolve to the schema’s type', () => {
    expectTypeOf<UpstreamClient['orderBook']>().parameters.toEqualTypeOf<[string, CallInit?]>();
    expectTypeOf<UpstreamClient['orderBook']>().returns.resolves.toEqualTypeOf<OrderBook>();
    expectTypeOf<UpstreamClient['marketHolders']>().returns.resolves.toEqualTypeOf<HoldersResponse>();
    expectTypeOf<UpstreamClient['userProfile']>().returns.resolves.toEqualTypeOf<UserProfileResponse>();
    expectTypeOf<UpstreamClient['health']>().parameters.toEqualTypeOf<[CallInit?]>();
  });

  it('fill path parameters and send only the named query fields, in order', async () => {
    const t = await recording();
    const extra = { limit: 5, sortBy: 'newest', statusFilter: 'active', unexpected: 'x' } as const;
    const calls = [
      t.client.markets(extra),
      t.client.marketHolders(MARKET, { type: 'NO', offset: 3 }),
      t.client.userProfile('ann', { includeClosed: true }),
      t.client.netWorthHistory('ann'),
      t.client.rewardsLeaderboard({ to: '2025-01-02', from: '2025-01-01' }),
      t.client.tokenPrice('0xab'),
    ];
    await Promise.allSettled(calls);
    expect(t.server.requests.map((r) => r.url).sort()).toEqual(
      [
        '/api/markets?limit=5&sortBy=newest&statusFilter=active',
        `/api/markets/${MARKET}/holders?type=NO&offset=3`,
        '/api/users/ann/profile?include_closed=true',
        '/api/users/ann/net-worth-history',
        '/api/rewards/leaderboard?from=2025-01-01&to=2025-01-02',
        '/api/tokens/price/0xab',
      ].sort(),
    );
  });

  it('take the CallInit after optional arguments that were left out', async () => {
    const t = await recording();
    const aborted = AbortSignal.abort(new Error('caller gave up'));
    await expect(t.client.markets(undefined, { signal: aborted })).rejects.toThrow('caller gave up');
    await expect(t.client.marketComments(MARKET, undefined, { signal: aborted })).rejects.toThrow(
      'caller gave up',
    );
    await expect(t.client.health({ signal: aborted })).rejects.toThrow('caller gave up');
    expect(t.server.requests).toHaveLength(0);
  });
});
