/**
 * The `rest` channel's path canonicalisation (protocol/rest-paths.ts): equivalent paths have one
 * spelling, private and unknown paths are refused as `path_not_public`, and the table is exactly
 * the upstream client's public GETs.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalRestPath, restRoutes } from '../../packages/protocol/src/protocol/rest-paths.ts';
import { endpoints } from '../../src/upstream/client.ts';
import { propertyRuns } from '../support/property-runs.ts';

const MARKET = '1c9a0d2e-3f4b-4c5d-8e6f-7a8b9c0d1e2f';

function canonical(path: string): string {
  const result = canonicalRestPath(path);
  if (!result.ok) throw new Error(`${path}: ${result.message}`);
  return result.value.path;
}

describe('canonicalRestPath', () => {
  it('is every public GET of the upstream client, and nothing else', () => {
    const gets = Object.values(endpoints)
      .filter((endpoint) => endpoint.method === 'GET' && endpoint.path !== '/health')
      .map((endpoint) => endpoint.path);
    expect(restRoutes.map((route) => route.template).sort()).toEqual(gets.sort());
  });

  it('spells equivalent paths one way: parameter order, defaults, letter case of ids', () => {
    const holders = `/api/markets/${MARKET}/holders?type=YES`;
    expect(canonical(`/api/markets/${MARKET.toUpperCase()}/holders?offset=0&limit=20&type=yes`)).toBe(
      holders,
    );
    expect(canonical(`/api/markets/${MARKET}/holders?limit=10&type=NO`)).toBe(
      `/api/markets/${MARKET}/holders?limit=10&type=NO`,
    );
    expect(canonical('/api/users/alice/positions?include_closed=TRUE')).toBe(
      '/api/users/alice/positions?include_closed=true',
    );
    expect(canonical('/api/rewards/leaderboard?limit=025')).toBe('/api/rewards/leaderboard');
    expect(canonical('/api/tokens/007')).toBe('/api/tokens/7');
    expect(canonical('/api/tokens/price/0xABcd')).toBe('/api/tokens/price/0xabcd');
    expect(canonical(`/clob/orderbook?market_id=${MARKET.toUpperCase()}`)).toBe(
      `/clob/orderbook?market_id=${MARKET}`,
    );
    expect(canonical('/api/markets/probabilities')).toBe('/api/markets/probabilities');
    expect(canonical('/api/search?q=will%20it+rain')).toBe('/api/search?q=will%20it%20rain');
  });

  it('is idempotent, and the same for any order of the query', () => {
    const params = ['limit=5', 'offset=10', 'sortBy=newest', 'statusFilter=active', 'tokenId=3'];
    fc.assert(
      fc.property(fc.shuffledSubarray(params), (chosen) => {
        const inOrder = params.filter((param) => chosen.includes(param));
        const once = canonical(`/api/markets?${inOrder.join('&')}`);
        expect(canonical(`/api/markets?${chosen.join('&')}`)).toBe(once);
        expect(canonical(once)).toBe(once);
      }),
      { numRuns: propertyRuns(100) },
    );
  });

  it('refuses private and unknown paths as path_not_public', () => {
    for (const path of [
      '/api/user/positions',
      '/auth/login',
      '/api/developer/orders',
      '/clob/orders',
      '/clob/market-prices/batch',
      '/health',
      '/api/users',
      '/api/markets/x/y/z',
    ])
      expect(canonicalRestPath(path), path).toMatchObject({ ok: false, code: 'path_not_public' });
  });

  it('refuses wrong parameters as bad_request, saying which', () => {
    const cases: Array<[string, string]> = [
      [`/api/markets/${MARKET}/holders`, 'requires query parameter "type"'],
      [`/api/markets/${MARKET}/comments?limit=51`, '"limit" must be an integer from 1 to 50'],
      ['/api/markets?sortBy=oldest', '"sortBy" must be one of volume, newest, ending_soon'],
      ['/api/markets?limit=5&limit=6', '"limit" given twice'],
      ['/api/markets?page=2', 'takes no query parameter "page"'],
      ['/api/markets/not-a-uuid/holders?type=YES', '"id" must be a UUID'],
      ['api/markets', 'starts with "/"'],
    ];
    for (const [path, message] of cases) {
      const result = canonicalRestPath(path);
      expect(result, path).toMatchObject({ ok: false, code: 'bad_request' });
      expect(result.ok ? '' : result.message, path).toContain(message);
    }
  });

  it('gives upstream the path and the decoded query', () => {
    expect(canonicalRestPath('/api/users/al%20ice/positions?include_closed=1')).toMatchObject({ ok: false });
    const result = canonicalRestPath('/api/users/al%20ice/net-worth-history?days=7');
    expect(result).toEqual({
      ok: true,
      value: {
        path: '/api/users/al%20ice/net-worth-history?days=7',
        template: '/api/users/:username/net-worth-history',
        pathname: '/api/users/al%20ice/net-worth-history',
        query: { days: '7' },
      },
    });
  });
});
