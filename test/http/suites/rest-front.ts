/**
 * The REST front (docs/operations.md "REST front"): upstream's public paths answered through the
 * relay with upstream's shapes and status codes, concurrent identical requests coalesced into one
 * upstream request, private paths never forwarded, and `GET /v1/book/:market` from live state.
 */
import { describe, expect, it } from 'vitest';
import { bookChecksum } from '../../../packages/protocol/src/protocol/book.ts';
import { publicRoutes } from '../../../src/http/rest-front/public-paths.ts';
import type { SimulatorProfileName } from '../../../src/sim/profile.ts';
import { endpoints } from '../../../src/upstream/client.ts';
import { clobPriceBatchResponse } from '../../../src/upstream/schemas.ts';
import { ProtocolClient } from '../../support/clients/protocol-client.ts';
import { expectedBook, type Harness, upstreamBook, useHarness } from '../../support/harness.ts';
import { waitFor } from '../../support/wait-for.ts';

type EndpointName = keyof typeof endpoints;

/** ISO timestamps are "now" on some endpoints; two answers a moment apart differ only there. */
function withoutTimes(text: string): string {
  // Any ISO time, with `Z` or an offset (the verbose profile writes +00:00).
  return text.replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})/g, '<time>');
}

/** The suite under each of `profiles` (a part of the matrix: test/support/profile-matrix.ts). */
export function restFrontSuite(profiles: readonly SimulatorProfileName[]): void {
  describe.each(profiles)('REST front (%s profile)', (profile) => {
    let harness: Harness;
    const { start } = useHarness(profile);

    async function send(base: string, method: string, path: string, body?: unknown) {
      const response = await fetch(`${base}${path}`, {
        method,
        ...(body === undefined
          ? {}
          : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
      });
      return { status: response.status, text: await response.text(), via: response.headers.get('via') };
    }

    /** Arguments for each row of the upstream client's table, from the simulator's own data. */
    async function sampleArguments(): Promise<Record<Exclude<EndpointName, 'health'>, unknown[]>> {
      const [market] = harness.sim.market.marketIds() as [string];
      const direct = async (path: string) => (await fetch(`${harness.sim.url}${path}`)).json();
      const tokens = (await direct('/api/tokens')) as { tokens: { id: number; oracle_feed_id: string }[] };
      const holders = (await direct(`/api/markets/${market}/holders?type=YES`)) as {
        holders: { username: string }[];
      };
      const token = tokens.tokens[0]!;
      const username = holders.holders[0]!.username;
      return {
        orderBook: [market],
        clobPrices: [[market]],
        markets: [{ limit: 5 }],
        market: [market],
        marketHistory: [market, { interval: '24h' }],
        marketHolders: [market, { type: 'YES' }],
        marketComments: [market],
        marketActivity: [market],
        probabilities: [],
        search: ['a'],
        tokens: [{ query: '' }],
        token: [token.id],
        tokenPrice: [token.oracle_feed_id],
        user: [username],
        userProfile: [username, { includeClosed: true }],
        userStats: [username],
        userPositions: [username],
        userActivity: [username],
        netWorthHistory: [username, { days: 7 }],
        rewardsProgram: [],
        rewardsLeaderboard: [{ limit: 5 }],
        rewardsEpochs: [{ limit: 5 }],
        marketData: [market],
        marketDataBatch: [[market]],
      };
    }

    it('answers every public path of the simulator with its status and shape', async () => {
      harness = await start({ sim: { markets: 3 } });
      const samples = await sampleArguments();
      const covered = new Set<string>();
      for (const [name, args] of Object.entries(samples)) {
        const request = endpoints[name as EndpointName].prepare(args as never);
        const query = new URLSearchParams();
        for (const [key, value] of Object.entries(request.query ?? {}))
          if (value !== undefined) query.append(key, String(value));
        const path = `${request.path}${query.size > 0 ? `?${query}` : ''}`;
        const [viaRelay, direct] = await Promise.all([
          send(harness.relay.url, request.method, path, request.body),
          send(harness.sim.url, request.method, path, request.body),
        ]);
        expect(viaRelay.status, path).toBe(200);
        expect(viaRelay.status, path).toBe(direct.status);
        // Marked as the relay's, so a relay pointed at this one cannot take it for upstream.
        expect(viaRelay.via, path).toBe('1.1 market-relay');
        expect(direct.via, path).toBeNull();
        expect(request.schema.safeParse(JSON.parse(viaRelay.text)).success, path).toBe(true);
        expect(withoutTimes(viaRelay.text), path).toBe(withoutTimes(direct.text));
        covered.add(`${request.method} ${request.endpoint.split(' ')[1]}`);
      }
      expect([...covered].sort()).toEqual(
        publicRoutes.map((route) => `${route.method} ${route.path}`).sort(),
      );
    });

    it("keeps upstream's error status codes", async () => {
      harness = await start({ sim: { markets: 1 } });
      const unknown = '00000000-0000-4000-8000-000000000000';
      for (const [method, path, body] of [
        ['GET', '/clob/orderbook', undefined],
        ['GET', '/clob/orderbook?market_id=nope', undefined],
        ['GET', `/clob/orderbook?market_id=${unknown}`, undefined],
        ['POST', '/clob/market-prices/batch', { market_ids: [] }],
        ['GET', `/api/market-data/${unknown}`, undefined],
      ] as const) {
        const [viaRelay, direct] = await Promise.all([
          send(harness.relay.url, method, path, body),
          send(harness.sim.url, method, path, body),
        ]);
        expect(direct.status, path).toBeGreaterThanOrEqual(400);
        expect({ status: viaRelay.status, text: viaRelay.text }, path).toEqual({
          status: direct.status,
          text: direct.text,
        });
      }
    });

    it('costs one upstream request for 100 concurrent identical requests', async () => {
      // Answers kept a minute: serving the 100 must not outlast the cache on a busy machine.
      harness = await start({ sim: { markets: 2 }, relay: { tuning: { restCacheTtlMs: 60_000 } } });
      const markets = harness.sim.market.marketIds();
      // The relay's own catalogue read (GET /api/markets) is not what is counted here.
      await harness.relay.knownMarkets.refresh();
      harness.sim.clearRequests();
      const gets = await Promise.all(
        Array.from({ length: 100 }, () =>
          send(harness.relay.url, 'GET', '/api/markets?limit=3&sortBy=volume'),
        ),
      );
      const posts = await Promise.all(
        Array.from({ length: 100 }, () =>
          send(harness.relay.url, 'POST', '/api/market-data/batch', { market_ids: markets }),
        ),
      );
      expect(new Set(gets.map((answer) => answer.text)).size).toBe(1);
      expect(gets.every((answer) => answer.status === 200)).toBe(true);
      expect(posts.every((answer) => answer.status === 200)).toBe(true);
      const logged = (path: string) => harness.sim.requests.filter((entry) => entry.path === path).length;
      expect(logged('/api/markets')).toBe(1);
      expect(logged('/api/market-data/batch')).toBe(1);
    });

    it('answers private paths 404 without reaching upstream', async () => {
      harness = await start({ sim: { markets: 1 } });
      await harness.relay.knownMarkets.refresh();
      harness.sim.clearRequests();
      for (const [method, path] of [
        ['GET', '/api/user/profile'],
        ['GET', '/api/user/rewards'],
        ['POST', '/auth/login'],
        ['POST', '/auth/refresh'],
        ['POST', '/api/developer/orders'],
        ['POST', '/clob/orders'],
        ['DELETE', '/clob/orders/123'],
        ['POST', '/clob/cancel'],
      ] as const) {
        const answer = await send(harness.relay.url, method, path, method === 'POST' ? {} : undefined);
        expect(answer.status, `${method} ${path}`).toBe(404);
      }
      expect(harness.sim.requests.filter((entry) => !entry.path.startsWith('/health'))).toEqual([]);
    });

    it('answers the CLOB price batch from live price streams, and asks upstream for the rest', async () => {
      harness = await start({ sim: { markets: 3 } });
      const [a, b, c] = harness.sim.market.marketIds() as [string, string, string];
      const watcher = await ProtocolClient.connect(harness.relay.url);
      await watcher.request({ op: 'subscribe', channel: 'price', markets: [a, b] });
      await waitFor('two price snapshots', () => watcher.of('snapshot').length === 2);
      harness.sim.clearRequests();
      // The poller asks for a and b together: a request naming fewer markets came from the front.
      const fromFront = () =>
        harness.sim.requests.filter(
          (entry) =>
            entry.path === '/clob/market-prices/batch' &&
            (entry.body as { market_ids: string[] }).market_ids.length === 1,
        );
      const alone = await send(harness.relay.url, 'POST', '/clob/market-prices/batch', { market_ids: [b] });
      expect(
        clobPriceBatchResponse.parse(JSON.parse(alone.text)).data.map((entry) => entry.market_id),
      ).toEqual([b]);

      const live = await send(harness.relay.url, 'POST', '/clob/market-prices/batch', { market_ids: [b, a] });
      expect(live.status).toBe(200);
      const entries = clobPriceBatchResponse.parse(JSON.parse(live.text)).data;
      expect(entries.map((entry) => entry.market_id)).toEqual([b, a]);
      for (const entry of entries) {
        const { market_id, timestamp: _timestamp, ...prices } = entry;
        expect(prices).toEqual(harness.relay.registry.get({ channel: 'price', market: market_id })!.state);
      }
      expect(fromFront()).toEqual([]);

      const other = await send(harness.relay.url, 'POST', '/clob/market-prices/batch', { market_ids: [c] });
      expect(other.status).toBe(200);
      expect(fromFront().map((entry) => entry.body)).toEqual([{ market_ids: [c] }]);
      await watcher.close();
    });

    it('serves GET /v1/book/:market from live state with epoch, seq and checksum', async () => {
      harness = await start({ sim: { markets: 2 } });
      const [market] = harness.sim.market.marketIds() as [string];
      for (const depth of [10, null] as const) {
        const answer = await send(
          harness.relay.url,
          'GET',
          `/v1/book/${market}${depth === null ? '' : `?depth=${depth}`}`,
        );
        expect(answer.status).toBe(200);
        const snapshot = JSON.parse(answer.text);
        const stream = harness.relay.registry.get({ channel: 'book', market, depth })!;
        expect(snapshot).toMatchObject({
          type: 'snapshot',
          channel: 'book',
          market,
          depth,
          epoch: stream.epoch,
        });
        expect(snapshot.seq).toBeGreaterThanOrEqual(1);
        expect(snapshot.data).toEqual(expectedBook(await upstreamBook(harness.sim, market), depth));
        expect(snapshot.checksum).toBe(bookChecksum(snapshot.data));
      }
      const unknown = '00000000-0000-4000-8000-000000000000';
      expect((await send(harness.relay.url, 'GET', `/v1/book/${unknown}`)).status).toBe(404);
      expect((await send(harness.relay.url, 'GET', '/v1/book/nope')).status).toBe(400);
      expect((await send(harness.relay.url, 'GET', `/v1/book/${market}?depth=7`)).status).toBe(400);
    });
  });
}
