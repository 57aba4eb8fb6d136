/**
 * @module test/sim/private-faults
 * Private endpoints (401 without a bearer token, 403 with one), fault injection (500, 429 with
 * Retry-After, bodies that fail JSON.parse or the schema) and the request log.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/sim/server.ts';
import { orderBook, upstreamHealth } from '../../src/upstream/schemas.ts';
import { errorBody, getJson, type SimFixture, startFixture } from './sim-fixture.ts';

let fixture: SimFixture | undefined;
afterEach(async () => {
  await fixture?.sim.close();
  fixture = undefined;
});

async function started(options: Parameters<typeof startFixture>[0] = {}): Promise<SimulatorHandle> {
  fixture = await startFixture(options);
  return fixture.sim;
}

const PRIVATE: [string, string][] = [
  ['GET', '/api/user/profile'],
  ['POST', '/clob/orders'],
  ['DELETE', '/clob/orders/abc-123'],
  ['GET', '/api/developer/orders'],
  ['POST', '/api/developer/anything/else'],
];

describe('private endpoints', () => {
  it('answer 401 without a bearer token and 403 with one', async () => {
    const sim = await started({ markets: 2 });
    for (const [method, path] of PRIVATE) {
      const anonymous = await fetch(`${sim.url}${path}`, { method });
      expect(anonymous.status, `${method} ${path}`).toBe(401);
      expect(anonymous.headers.get('www-authenticate')).toBe('Bearer');
      errorBody.parse(await anonymous.json());
      const wrongScheme = await fetch(`${sim.url}${path}`, {
        method,
        headers: { authorization: 'Basic abc' },
      });
      expect(wrongScheme.status).toBe(401);
      await wrongScheme.arrayBuffer();
      const withToken = await fetch(`${sim.url}${path}`, {
        method,
        headers: { authorization: 'Bearer t0ken' },
      });
      expect(withToken.status, `${method} ${path}`).toBe(403);
      errorBody.parse(await withToken.json());
    }
  });
});

describe('faults', () => {
  it('errorRate 1: every request is a 500', async () => {
    const sim = await started({ markets: 2, faults: { errorRate: 1 } });
    const id = sim.market.marketIds()[0]!;
    for (const path of ['/health', `/clob/orderbook?market_id=${id}`, '/api/markets', '/nope']) {
      const response = await getJson(sim, path);
      expect(response.status).toBe(500);
      errorBody.parse(response.body);
    }
  });

  it('rateLimitRate 1: 429 with Retry-After: 1', async () => {
    const sim = await started({ markets: 2 });
    sim.setFaults({ rateLimitRate: 1 });
    const response = await getJson(sim, '/health');
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('1');
    sim.setFaults({ rateLimitRate: 0 });
    expect((await getJson(sim, '/health')).status).toBe(200);
  });

  it('malformedRate 1: every body fails JSON.parse or the schema, both kinds occur', async () => {
    const sim = await started({ markets: 2, faults: { malformedRate: 1 } });
    const id = sim.market.marketIds()[0]!;
    const kinds = new Set<string>();
    for (let n = 0; n < 20; n++) {
      const path = n % 2 === 0 ? '/health' : `/clob/orderbook?market_id=${id}`;
      const schema = n % 2 === 0 ? upstreamHealth : orderBook;
      const response = await fetch(`${sim.url}${path}`);
      expect(response.status).toBe(200);
      const text = await response.text();
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        kinds.add('not json');
        continue;
      }
      expect(schema.safeParse(parsed).success).toBe(false);
      kinds.add('schema');
    }
    expect([...kinds].sort()).toEqual(['not json', 'schema']);
  });

  it('fault draws (latency and errors on) do not change how markets evolve', async () => {
    const calm = await startFixture({ markets: 3, seed: 11 });
    const faulty = await startFixture({ markets: 3, seed: 11, faults: { errorRate: 0.5, latencyMs: 5 } });
    try {
      for (let n = 0; n < 10; n++) {
        await getJson(faulty.sim, '/health');
        calm.sim.tick();
        faulty.sim.tick();
      }
      for (const id of calm.sim.market.marketIds()) {
        expect(faulty.sim.market.orderBook(id)).toEqual(calm.sim.market.orderBook(id));
      }
      const statuses = new Set(faulty.sim.requests.map((entry) => entry.status));
      expect([...statuses].sort()).toEqual([200, 500]);
    } finally {
      await calm.sim.close();
      await faulty.sim.close();
    }
  });

  it('rejects rates outside 0..1', async () => {
    const sim = await started({ markets: 1 });
    expect(() => sim.setFaults({ errorRate: 2 })).toThrow(RangeError);
    expect(() => sim.setFaults({ latencyMs: -1 })).toThrow(RangeError);
  });
});

describe('request log', () => {
  it('records every request in order with method, path, query, body and status', async () => {
    const sim = await started({ markets: 2 });
    const [id] = sim.market.marketIds() as [string];
    await getJson(sim, `/clob/orderbook?market_id=${id}`);
    await getJson(sim, '/clob/market-prices/batch', {
      method: 'POST',
      body: JSON.stringify({ market_ids: [id] }),
    });
    await getJson(sim, '/clob/orderbook');
    expect(
      sim.requests.map(({ method, path, query, body, status }) => ({ method, path, query, body, status })),
    ).toEqual([
      { method: 'GET', path: '/clob/orderbook', query: { market_id: id }, body: undefined, status: 200 },
      {
        method: 'POST',
        path: '/clob/market-prices/batch',
        query: {},
        body: { market_ids: [id] },
        status: 200,
      },
      { method: 'GET', path: '/clob/orderbook', query: {}, body: undefined, status: 400 },
    ]);
    expect(sim.requests[0]!.at).toBe(fixture!.clock.now());
    sim.clearRequests();
    expect(sim.requests).toEqual([]);
  });

  it('keeps at most requestLogLimit entries, dropping the oldest', async () => {
    const sim = await started({ markets: 1, requestLogLimit: 10 });
    for (let n = 0; n < 12; n++) await getJson(sim, `/health?n=${n}`);
    expect(sim.requests.length).toBeLessThanOrEqual(11);
    expect(sim.requests[sim.requests.length - 1]!.query).toEqual({ n: '11' });
    expect(sim.requests[0]!.query).toEqual({ n: String(12 - sim.requests.length) });
  });
});
