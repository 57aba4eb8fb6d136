/**
 * @module test/sim/profiles
 * The simulator's profiles (docs/upstream.md "Open choices and simulator profiles"): `terse`
 * differs from `default` in every choice the upstream interface leaves open, and answers each as
 * its profile says.
 */

import { get } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import {
  allSimulatorProfileNames,
  type SimulatorProfile,
  type SimulatorProfileName,
  simulatorProfileNames,
  simulatorProfiles,
} from '../../src/sim/profile.ts';
import { EXTRA_FIELD } from '../../src/sim/wire-form.ts';
import { clobPriceBatchResponse, marketActivityResponse } from '../../src/upstream/schemas.ts';
import { postJson, type SimFixture, startFixture } from './sim-fixture.ts';

const NOWHERE = '00000000-0000-4000-8000-000000000000';
/** How answers travel and are written: varied across the matrix rather than by terse alone. */
const WIRE_CHOICES: (keyof SimulatorProfile)[] = ['compression', 'timeForm', 'extraFields', 'redirect'];

describe('simulator profiles', () => {
  let fixture: SimFixture | undefined;
  afterEach(async () => {
    await fixture?.sim.close();
    fixture = undefined;
  });

  it('answers every open choice more than one way across the end-to-end matrix', () => {
    const { default: standard, terse } = simulatorProfiles;
    // terse differs from default in every choice of what upstream answers...
    for (const choice of Object.keys(standard) as (keyof SimulatorProfile)[]) {
      if (!WIRE_CHOICES.includes(choice)) expect(terse[choice], choice).not.toEqual(standard[choice]);
    }
    // ...and the matrix as a whole in every choice of how it travels (redirect is its own profile).
    for (const choice of WIRE_CHOICES.filter((choice) => choice !== 'redirect')) {
      const answers = new Set(simulatorProfileNames.map((name) => simulatorProfiles[name][choice]));
      expect(answers.size, choice).toBeGreaterThan(1);
    }
    expect(simulatorProfileNames).not.toContain('redirect');
    expect(allSimulatorProfileNames).toContain('redirect');
  });

  it('compresses as the profile says: br or gzip as asked (terse), gzip unasked (verbose), none (default)', async () => {
    const encodings = async (profile: SimulatorProfileName) => {
      fixture = await startFixture({ markets: 2, profile });
      const ask = async (acceptEncoding: string) =>
        new Promise<string | undefined>((resolve, reject) => {
          // node:http, not fetch: fetch asks for gzip and decodes by itself.
          get(`${fixture?.sim.url}/health`, { headers: { 'accept-encoding': acceptEncoding } }, (res) => {
            res.resume();
            resolve(res.headers['content-encoding']);
          }).on('error', reject);
        });
      const answers = [await ask('gzip, br'), await ask('gzip'), await ask('identity')];
      await fixture.sim.close();
      fixture = undefined;
      return answers;
    };
    expect(await encodings('default')).toEqual([undefined, undefined, undefined]);
    expect(await encodings('terse')).toEqual(['br', 'gzip', undefined]);
    expect(await encodings('verbose')).toEqual(['gzip', 'gzip', 'gzip']);
  });

  it('writes times with +00:00 in whole seconds and adds a field to every record (verbose)', async () => {
    fixture = await startFixture({ markets: 4, profile: 'verbose' });
    const { sim } = fixture;
    const [market] = sim.market.activeMarketIds() as [string];
    const activity = (await (await fetch(`${sim.url}/api/markets/${market}/activity?limit=2`)).json()) as {
      activity: Record<string, unknown>[];
    };
    for (const entry of activity.activity) {
      expect(entry.activity_timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+00:00$/);
      expect(entry[EXTRA_FIELD]).toBeTypeOf('object');
    }
    expect(() => marketActivityResponse.parse(activity)).not.toThrow();
    const probabilities = (await (await fetch(`${sim.url}/api/markets/probabilities`)).json()) as {
      probabilities: Record<string, Record<string, unknown>>;
    };
    // A map keyed by market id gets no added key; its entries do.
    expect(Object.keys(probabilities.probabilities).every((key) => key.includes('-'))).toBe(true);
    expect(Object.values(probabilities.probabilities).every((entry) => EXTRA_FIELD in entry)).toBe(true);
  });

  it('redirects everything to https (redirect)', async () => {
    fixture = await startFixture({ markets: 2, profile: 'redirect' });
    const answer = await fetch(`${fixture.sim.url}/health`, { redirect: 'manual' });
    expect(answer.status).toBe(301);
    expect(answer.headers.get('location')).toBe(`${fixture.sim.url.replace('http:', 'https:')}/health`);
  });

  it('answers every open choice the terse way', async () => {
    fixture = await startFixture({ markets: 30, profile: 'terse' });
    const { sim } = fixture;
    const [market] = sim.market.activeMarketIds() as [string];
    const get = (path: string) => fetch(`${sim.url}${path}`);

    // Errors: no `success`; an unknown id is 400 on /api, still 404 on the CLOB; a malformed one 422.
    const unknown = await get(`/api/markets/${NOWHERE}`);
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toEqual({ error: `market ${NOWHERE} not found` });
    expect((await get(`/clob/orderbook?market_id=${NOWHERE}`)).status).toBe(404);
    expect((await get('/clob/orderbook?market_id=nope')).status).toBe(400);
    expect((await get('/api/markets/nope')).status).toBe(422);
    expect((await get('/api/tokens/price/0xdead')).status).toBe(400);

    // The CLOB carries `success`; its batch answers an unknown id bare, with whole-second times.
    const book = (await (await get(`/clob/orderbook?market_id=${market}`)).json()) as Record<string, unknown>;
    expect(book.success).toBe(true);
    const batch = clobPriceBatchResponse.parse(
      (await postJson(sim, '/clob/market-prices/batch', { market_ids: [market, NOWHERE] })).body,
    );
    expect(batch.data.map((entry) => entry.market_id)).toEqual([market, NOWHERE]);
    expect(Object.keys(batch.data[1]!).sort()).toEqual(['market_id', 'timestamp']);
    expect(batch.data.every((entry) => /T\d{2}:\d{2}:\d{2}Z$/.test(entry.timestamp))).toBe(true);

    // Activity oldest first; the detail form without taker_fee_bps; list pages of at most 25.
    const activity = marketActivityResponse.parse(
      await (await get(`/api/markets/${market}/activity`)).json(),
    );
    const times = activity.activity.map((entry) => entry.activity_timestamp);
    expect(times).toEqual([...times].sort());
    expect(times.at(0)).not.toBe(times.at(-1));
    const detail = (await (await get(`/api/markets/${market}`)).json()) as { market: object };
    expect(detail.market).not.toHaveProperty('taker_fee_bps');
    const list = (await (await get('/api/markets?limit=100')).json()) as {
      markets: unknown[];
      pagination: { limit: number; hasMore: boolean };
    };
    expect(list.markets).toHaveLength(25);
    expect(list.pagination).toMatchObject({ limit: 25, hasMore: true });

    expect(((await (await get('/health')).json()) as { status: string }).status).toBe('healthy');

    // A 429's Retry-After is an HTTP date, one to two seconds on.
    sim.setFaults({ rateLimitRate: 1 });
    const limited = await get('/health');
    expect(limited.status).toBe(429);
    const waitMs = Date.parse(limited.headers.get('retry-after') ?? '') - fixture.clock.now();
    expect(waitMs).toBeGreaterThan(0);
    expect(waitMs).toBeLessThanOrEqual(2_000);
  });

  it('serves at most 20 entries a page on every paged list in the capped profile, and says so', async () => {
    fixture = await startFixture({ markets: 30, profile: 'capped' });
    const { sim } = fixture;
    const [market] = sim.market.marketIds() as [string];
    sim.market.printTrades(market, 150);
    const lists = {
      markets: '/api/markets?limit=100&offset=3',
      holders: `/api/markets/${market}/holders?type=YES&limit=100`,
      comments: `/api/markets/${market}/comments?limit=50`,
      activity: `/api/markets/${market}/activity?limit=100`,
    };
    for (const [key, path] of Object.entries(lists)) {
      const body = (await (await fetch(`${sim.url}${path}`)).json()) as Record<string, unknown> & {
        pagination: { limit: number; offset: number; hasMore: boolean; total?: number };
      };
      const entries = body[key] as unknown[];
      expect(entries.length, path).toBeLessThanOrEqual(20);
      expect(body.pagination.limit, path).toBe(20);
      expect(body.pagination.hasMore, path).toBe(
        body.pagination.offset + entries.length < (body.pagination.total ?? Infinity),
      );
      if (key !== 'holders') expect(entries, path).toHaveLength(20);
    }
    // A limit below the cap is served as asked.
    const small = (await (await fetch(`${sim.url}/api/markets?limit=7`)).json()) as { markets: unknown[] };
    expect(small.markets).toHaveLength(7);
  });

  it('keeps its historical answers in the default profile', async () => {
    fixture = await startFixture({ markets: 2 });
    const { sim } = fixture;
    expect(sim.profile).toBe('default');
    const unknown = await fetch(`${sim.url}/api/markets/${NOWHERE}`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ success: false, error: `market ${NOWHERE} not found` });
    const batch = await postJson(sim, '/clob/market-prices/batch', { market_ids: [NOWHERE] });
    expect(batch.body).toEqual({ data: [] });
    sim.setFaults({ rateLimitRate: 1 });
    expect((await fetch(`${sim.url}/health`)).headers.get('retry-after')).toBe('1');
  });
});
