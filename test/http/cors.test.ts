/**
 * CORS on the relay's public HTTP paths (docs/operations.md "CORS"): the REST front, /v1/book,
 * /v1/sse and /health, following --allowed-origins; operator endpoints get none.
 */
import { describe, expect, it } from 'vitest';
import { type Harness, useHarness } from '../support/harness.ts';

const page = 'https://ui.example';
const stranger = 'https://evil.example';

describe('CORS', () => {
  const { start } = useHarness();

  async function relay(allowedOrigins?: string[]): Promise<Harness> {
    return start({ sim: { markets: 2 }, relay: allowedOrigins === undefined ? {} : { allowedOrigins } });
  }
  const upstreamAsked = (harness: Harness, path: string) =>
    harness.sim.requests.filter((r) => r.path === path).length;

  it('lets any origin read the public paths when no allow-list is set', async () => {
    const harness = await relay();
    const response = await fetch(`${harness.relay.url}/api/markets?limit=2`, { headers: { origin: page } });
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('access-control-expose-headers')).toContain('retry-after');
    const health = await fetch(`${harness.relay.url}/health`, { headers: { origin: stranger } });
    expect(health.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('echoes an allowed origin, on the REST front, /v1/book and /v1/sse', async () => {
    const harness = await relay([page]);
    const market = harness.sim.market.marketIds()[0]!;
    for (const path of ['/api/markets?limit=2', `/v1/book/${market}?depth=10`]) {
      const response = await fetch(`${harness.relay.url}${path}`, { headers: { origin: page } });
      expect(response.status, path).toBe(200);
      expect(response.headers.get('access-control-allow-origin'), path).toBe(page);
      expect(response.headers.get('vary'), path).toContain('Origin');
    }
    const controller = new AbortController();
    const sse = await fetch(`${harness.relay.url}/v1/sse?channel=price&markets=${market}`, {
      headers: { origin: page },
      signal: controller.signal,
    });
    expect(sse.status).toBe(200);
    expect(sse.headers.get('access-control-allow-origin')).toBe(page);
    controller.abort();
  });

  it('refuses another origin with 403 before asking upstream', async () => {
    const harness = await relay([page]);
    const path = '/api/rewards/program';
    const before = upstreamAsked(harness, path);
    const response = await fetch(`${harness.relay.url}${path}`, { headers: { origin: stranger } });
    expect(response.status).toBe(403);
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
    expect(await response.json()).toEqual({ error: 'forbidden', message: 'this origin is not allowed' });
    expect(upstreamAsked(harness, path)).toBe(before);
    // Without an Origin (a script, a bot) the allow-list does not apply.
    expect((await fetch(`${harness.relay.url}${path}`)).status).toBe(200);
  });

  it('answers preflights: allowed with methods and headers, refused, and 404 off the public paths', async () => {
    const harness = await relay([page]);
    const preflight = (path: string, origin: string, method = 'GET') =>
      fetch(`${harness.relay.url}${path}`, {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': method,
          'access-control-request-headers': 'authorization, last-event-id',
        },
      });
    // The history export, which the SDK's history() reads from a page.
    expect((await preflight('/v1/history/book', page)).status).toBe(204);
    const allowed = await preflight('/v1/sse', page);
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(page);
    expect(allowed.headers.get('access-control-allow-methods')).toBe('GET, OPTIONS');
    expect(allowed.headers.get('access-control-allow-headers')).toContain('authorization');
    expect(allowed.headers.get('access-control-allow-headers')).toContain('last-event-id');
    expect(Number(allowed.headers.get('access-control-max-age'))).toBeGreaterThan(0);
    const batch = await preflight('/clob/market-prices/batch', page, 'POST');
    expect(batch.headers.get('access-control-allow-methods')).toBe('POST, OPTIONS');
    expect(batch.headers.get('access-control-allow-headers')).toContain('content-type');

    const refused = await preflight('/api/markets', stranger);
    expect(refused.status).toBe(403);
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();

    const operator = await preflight('/metrics', page);
    expect(operator.status).toBe(404);
    expect(operator.headers.get('access-control-allow-origin')).toBeNull();
    const metrics = await fetch(`${harness.relay.url}/metrics`, { headers: { origin: page } });
    expect(metrics.headers.get('access-control-allow-origin')).toBeNull();
  });
});
