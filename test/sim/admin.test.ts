/**
 * The simulator operated from outside over HTTP, as docs/upstream.md "Operating the simulator"
 * describes: the admin API under `/_sim/` sets fault knobs and market activity at run time, the
 * request log and `GET /metrics` count what upstream served, and a relay is driven into `stale` and
 * back through nothing but the admin API.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startSimulator } from '../../src/sim/server.ts';
import { ProtocolClient } from '../support/clients/protocol-client.ts';
import { type Harness, startHarness } from '../support/harness.ts';
import { promtoolCheck, runPromtoolTests } from '../support/promtool.ts';
import { waitFor } from '../support/wait-for.ts';

type Json = Record<string, unknown>;

async function call(url: string, method: string, body?: unknown): Promise<{ status: number; body: Json }> {
  const response = await fetch(url, {
    method,
    ...(body === undefined
      ? {}
      : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Json };
}

describe('simulator admin API', () => {
  const stops: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const stop of stops.splice(0)) await stop();
  });

  async function sim() {
    const started = await startSimulator({ markets: 3, seed: 5, tickMs: 0 });
    stops.push(() => started.close());
    return started;
  }

  it('reads and sets every fault knob, validating what it is given', async () => {
    const { url } = await sim();
    expect((await call(`${url}/_sim`, 'GET')).body).toEqual({
      faults: { latencyMs: 0, errorRate: 0, rateLimitRate: 0, malformedRate: 0 },
      activity: { tickMs: 0, booksChanging: true },
      requestsLogged: 0,
    });
    const set = await call(`${url}/_sim/faults`, 'PUT', { errorRate: 1, latencyMs: 5 });
    expect(set).toEqual({
      status: 200,
      body: { latencyMs: 5, errorRate: 1, rateLimitRate: 0, malformedRate: 0 },
    });
    expect((await fetch(`${url}/api/markets`)).status).toBe(500);
    // Admin requests skip the faults, so the way out of an outage stays open.
    expect((await call(`${url}/_sim/faults`, 'PUT', { errorRate: 0, rateLimitRate: 1 })).status).toBe(200);
    expect((await fetch(`${url}/api/markets`)).status).toBe(429);
    await call(`${url}/_sim/faults`, 'PUT', { rateLimitRate: 0, malformedRate: 0, latencyMs: 0 });
    expect((await fetch(`${url}/api/markets`)).status).toBe(200);

    expect(await call(`${url}/_sim/faults`, 'PUT', { errorRate: 2 })).toEqual({
      status: 400,
      body: { error: expect.stringMatching(/^invalid faults: errorRate: /) },
    });
    expect((await call(`${url}/_sim/faults`, 'PUT', { outage: true })).status).toBe(400);
    expect((await call(`${url}/_sim/faults`, 'POST', {})).status).toBe(405);
    expect((await call(`${url}/_sim/nothing`, 'GET')).status).toBe(404);
  });

  it('sets market activity: tick interval, frozen books, one market, a manual tick', async () => {
    const { url, market } = await sim();
    const [id] = market.activeMarketIds();
    const book = async () =>
      JSON.stringify(await (await fetch(`${url}/clob/orderbook?market_id=${id}`)).json());
    const before = await book();
    expect((await call(`${url}/_sim/activity`, 'PUT', { booksChanging: false })).body).toEqual({
      tickMs: 0,
      booksChanging: false,
    });
    await call(`${url}/_sim/tick`, 'POST');
    expect(await book()).toBe(before);
    await call(`${url}/_sim/activity`, 'PUT', { booksChanging: true, tickMs: 20 });
    await waitFor('the book to change on the timer', async () => (await book()) !== before);
    await call(`${url}/_sim/activity`, 'PUT', { tickMs: 0 });

    expect((await call(`${url}/_sim/markets/${id}`, 'PUT', { changing: false })).body).toMatchObject({
      id,
      changing: false,
    });
    expect((await call(`${url}/_sim/markets/${id}`, 'DELETE')).status).toBe(200);
    expect((await fetch(`${url}/clob/orderbook?market_id=${id}`)).status).toBe(404);
    expect((await call(`${url}/_sim/activity`, 'PUT', { tickMs: -1 })).status).toBe(400);
  });

  it('sets the lifecycle pace and moves one market on, as the market endpoints then show', async () => {
    const { url, market } = await sim();
    expect((await call(`${url}/_sim/lifecycle`, 'GET')).body).toEqual({
      expireEveryMs: 0,
      resolutionDelayMs: 600_000,
    });
    expect((await call(`${url}/_sim/lifecycle`, 'PUT', { expireEveryMs: 5_000 })).body).toEqual({
      expireEveryMs: 5_000,
      resolutionDelayMs: 600_000,
    });
    expect((await call(`${url}/_sim/lifecycle`, 'PUT', { expireEveryMs: -1 })).status).toBe(400);
    const [id] = market.activeMarketIds();
    expect((await call(`${url}/_sim/markets/${id}`, 'PUT', { status: 'RESOLVED' })).body).toMatchObject({
      id,
      status: 'RESOLVED',
    });
    expect((await call(`${url}/api/markets/${id}`, 'GET')).body).toMatchObject({
      market: { market_id: id, status: 'RESOLVED' },
    });
    const resolved = await call(`${url}/api/markets?statusFilter=resolved&limit=100`, 'GET');
    expect((resolved.body.markets as Json[]).map((entry) => entry.market_id)).toContain(id);
    expect((await call(`${url}/_sim/markets/${id}`, 'PUT', { status: 'ACTIVE' })).status).toBe(400);
  });

  it('adds an ACTIVE market that every market endpoint serves from then on', async () => {
    const { url, market } = await sim();
    const before = market.marketIds().length;
    const added = await call(`${url}/_sim/markets`, 'POST');
    expect(added.status).toBe(201);
    const id = String(added.body.id);
    expect(added.body).toMatchObject({ status: 'ACTIVE' });
    expect(market.marketIds()).toHaveLength(before + 1);
    expect((await call(`${url}/api/markets/${id}`, 'GET')).body).toMatchObject({
      market: { market_id: id, status: 'ACTIVE' },
    });
    const listed = await call(`${url}/api/markets?statusFilter=active&limit=100`, 'GET');
    expect((listed.body.markets as Json[]).map((entry) => entry.market_id)).toContain(id);
    expect((await fetch(`${url}/clob/orderbook?market_id=${id}`)).status).toBe(200);
  });

  it('serves the request log and its own metrics, leaving admin requests out', async () => {
    const { url, market } = await sim();
    const [id] = market.activeMarketIds();
    await fetch(`${url}/clob/orderbook?market_id=${id}`);
    await fetch(`${url}/clob/orderbook?market_id=${id}`);
    await call(`${url}/_sim/faults`, 'PUT', { errorRate: 1 });
    await fetch(`${url}/api/markets`);
    await call(`${url}/_sim/faults`, 'PUT', { errorRate: 0 });

    const log = await call(`${url}/_sim/requests?limit=2`, 'GET');
    expect(log.body.total).toBe(3);
    expect(log.body.requests).toEqual([
      expect.objectContaining({ method: 'GET', path: '/clob/orderbook', status: 200 }),
      expect.objectContaining({ method: 'GET', path: '/api/markets', status: 500, fault: 'error' }),
    ]);

    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toContain('market_relay_sim_requests_total{endpoint="/clob/orderbook",status="200"} 2');
    expect(metrics).toContain('market_relay_sim_faults_injected_total{fault="error"} 1');
    expect(metrics).toContain('market_relay_sim_markets{status="ACTIVE"}');
    if (runPromtoolTests) expect(await promtoolCheck(metrics)).toEqual({ code: 0, output: '' });

    await call(`${url}/_sim/requests`, 'DELETE');
    expect((await call(`${url}/_sim/requests`, 'GET')).body).toEqual({ total: 0, requests: [] });
  });

  it('drives a relay into stale and back', async () => {
    const harness: Harness = await startHarness({
      sim: { markets: 2 },
      relay: { tuning: { upstreamRetries: 0 } },
    });
    stops.push(() => harness.stop());
    const market = harness.sim.market.marketIds()[0]!;
    const client = await ProtocolClient.connect(harness.relay.url);
    stops.push(() => client.close());
    await client.request({ op: 'subscribe', channel: 'book', markets: [market] });
    await waitFor('a snapshot', () => client.view('book', market));
    const lastState = () => client.of('status').findLast((s) => s.market === market)?.state;

    await call(`${harness.sim.url}/_sim/faults`, 'PUT', { errorRate: 1 });
    await waitFor('the stream to go stale', () => lastState() === 'stale');
    await call(`${harness.sim.url}/_sim/faults`, 'PUT', { errorRate: 0 });
    await waitFor('the stream to be live again', () => lastState() === 'live');
    expect(client.violations).toEqual([]);
  });
});
