import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, expectTypeOf, it } from 'vitest';
import type { UserProfileResponse } from '../../src/upstream/account-schemas.ts';
import {
  type CallInit,
  UpstreamClient,
  type UpstreamClientOptions,
  type UpstreamRequestEvent,
} from '../../src/upstream/client.ts';
import {
  UpstreamError,
  UpstreamHttpError,
  UpstreamInvalidArgumentError,
  UpstreamInvalidJsonError,
  UpstreamNetworkError,
  UpstreamSchemaError,
  UpstreamTimeoutError,
} from '../../src/upstream/errors.ts';
import type { HoldersResponse, OrderBook, UpstreamHealth } from '../../src/upstream/schemas.ts';
import { type Handler, json, type ScriptedServer, startScriptedServer, waitFor } from './scripted-server.ts';

const MARKET = '3f2b8c1e-5d4a-4e6f-9a7b-1c2d3e4f5a6b';
const OTHER_MARKET = '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';

const book = {
  market_id: MARKET,
  bids: [{ id: 'b1', price: '0.55000000', size: '10', token_id: 1 }],
  asks: [{ id: 'a1', price: '0.57000000', size: '4.5', token_id: 1 }],
  last_price: '0.56000000',
  timestamp: '2025-01-01T00:00:00.000Z',
};

const health = {
  status: 'ok',
  timestamp: '2025-01-01T00:00:00Z',
  services: { database: true, message_queue: true, settlement: true },
};

let server: ScriptedServer | undefined;
let client: UpstreamClient | undefined;

afterEach(async () => {
  await client?.close();
  await server?.close();
  client = undefined;
  server = undefined;
});

async function setUp(
  handler: Handler,
  options: Partial<UpstreamClientOptions> = {},
): Promise<{ server: ScriptedServer; client: UpstreamClient; events: UpstreamRequestEvent[] }> {
  server = await startScriptedServer(handler);
  client = new UpstreamClient({ baseUrl: server.url, retryBaseMs: 1, ...options });
  const events: UpstreamRequestEvent[] = [];
  client.events.on('request', (event) => events.push(event));
  return { server, client, events };
}

/** Answers the scripted responses in order, then repeats the last one. */
function sequence(...responses: ((res: ServerResponse) => void)[]): Handler {
  return (_req, res, index) => {
    const respond = responses[Math.min(index, responses.length - 1)];
    respond?.(res);
  };
}

const ok = (body: unknown) => (res: ServerResponse) => json(res, 200, body);
const status =
  (code: number, headers: Record<string, string> = {}) =>
  (res: ServerResponse) =>
    json(res, code, { success: false, error: `scripted ${code}` }, headers);

function outcomes(events: UpstreamRequestEvent[]): string[] {
  return events.map((event) => `${event.attempt}:${event.outcome}${event.status ? `:${event.status}` : ''}`);
}

describe('UpstreamClient requests', () => {
  it('returns the validated body and reports one ok attempt', async () => {
    const t = await setUp(sequence(ok(book)));
    await expect(t.client.orderBook(MARKET)).resolves.toEqual(book);
    expect(t.server.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      `GET /clob/orderbook?market_id=${MARKET}`,
    ]);
    expect(t.events).toMatchObject([
      { endpoint: 'GET /clob/orderbook', outcome: 'ok', status: 200, attempt: 1 },
    ]);
  });

  it('keeps a path prefix of the base URL', async () => {
    server = await startScriptedServer(sequence(ok({ data: [] })));
    client = new UpstreamClient({ baseUrl: `${server.url}/upstream/v0/` });
    await client.clobPrices([MARKET, OTHER_MARKET]);
    expect(server.requests).toEqual([
      {
        method: 'POST',
        url: '/upstream/v0/clob/market-prices/batch',
        body: JSON.stringify({ market_ids: [MARKET, OTHER_MARKET] }),
        headers: expect.objectContaining({ 'content-type': 'application/json' }),
      },
    ]);
  });

  it('percent-encodes usernames so they stay one path segment', async () => {
    const t = await setUp(sequence(status(404)));
    await expect(t.client.user('a/b?c#d')).rejects.toBeInstanceOf(UpstreamHttpError);
    expect(t.server.requests.map((r) => r.url)).toEqual(['/api/users/a%2Fb%3Fc%23d']);
  });
});

describe('UpstreamClient failures', () => {
  it('times out a server that never answers, retrying each attempt', async () => {
    const t = await setUp(() => {}, { timeoutMs: 150, retries: 1 });
    const error = await t.client.orderBook(MARKET).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamTimeoutError);
    expect((error as UpstreamTimeoutError).code).toBe('upstream_unavailable');
    expect(t.server.requests).toHaveLength(2);
    expect(outcomes(t.events)).toEqual(['1:timeout', '2:timeout']);
  });

  it('times out a body that starts but never ends', async () => {
    const t = await setUp(
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"market_id":');
      },
      { timeoutMs: 150, retries: 0 },
    );
    await expect(t.client.orderBook(MARKET)).rejects.toBeInstanceOf(UpstreamTimeoutError);
    expect(outcomes(t.events)).toEqual(['1:timeout']);
  });

  it('retries a connection reset mid-body as a network error', async () => {
    const t = await setUp(
      sequence((res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
        res.write('{"market_id":', () => res.destroy());
      }, ok(book)),
    );
    await expect(t.client.orderBook(MARKET)).resolves.toEqual(book);
    expect(outcomes(t.events)).toEqual(['1:network_error', '2:ok:200']);
  });

  it('retries a 500 and returns the later success', async () => {
    const t = await setUp(sequence(status(500), ok(book)));
    await expect(t.client.orderBook(MARKET)).resolves.toEqual(book);
    expect(outcomes(t.events)).toEqual(['1:http_error:500', '2:ok:200']);
  });

  it('gives up after the configured retries with the last status', async () => {
    const t = await setUp(sequence(status(503)), { retries: 2 });
    const error = await t.client.orderBook(MARKET).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamHttpError);
    expect((error as UpstreamHttpError).status).toBe(503);
    expect((error as UpstreamHttpError).code).toBe('upstream_unavailable');
    expect(t.server.requests).toHaveLength(3);
    expect(outcomes(t.events)).toEqual(['1:http_error:503', '2:http_error:503', '3:http_error:503']);
  });

  it('waits out a 429 Retry-After before retrying', async () => {
    const t = await setUp(sequence(status(429, { 'retry-after': '1' }), ok(book)), {
      // Backoff alone would retry within a millisecond; the retry only succeeds after Retry-After.
      retryBaseMs: 1,
    });
    const sent = Date.now();
    await expect(t.client.orderBook(MARKET)).resolves.toEqual(book);
    expect(outcomes(t.events)).toEqual(['1:rate_limited:429', '2:ok:200']);
    // A lower bound only (a timer never fires a whole 100 ms early), to tell Retry-After from backoff.
    expect(Date.now() - sent).toBeGreaterThanOrEqual(900);
  });

  it('reports a 429 that outlasts the retries as status 429', async () => {
    const t = await setUp(sequence(status(429, { 'retry-after': '0' })), { retries: 1 });
    const error = await t.client.clobPrices([MARKET]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamHttpError);
    expect((error as UpstreamHttpError).status).toBe(429);
    expect(outcomes(t.events)).toEqual(['1:rate_limited:429', '2:rate_limited:429']);
  });

  it('does not retry a 404 and maps it to unknown_market', async () => {
    const t = await setUp(sequence(status(404)), { retries: 2 });
    const error = await t.client.orderBook(MARKET).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamHttpError);
    expect(error).toMatchObject({ status: 404, code: 'unknown_market', endpoint: 'GET /clob/orderbook' });
    expect((error as Error).message).toContain('scripted 404');
    expect(t.server.requests).toHaveLength(1);
  });

  it('does not retry a 400 and maps it to bad_request', async () => {
    const t = await setUp(sequence(status(400)), { retries: 2 });
    await expect(t.client.clobPrices([MARKET])).rejects.toMatchObject({ status: 400, code: 'bad_request' });
    expect(t.server.requests).toHaveLength(1);
  });

  it('maps a 404 on a user endpoint to bad_request, not unknown_market', async () => {
    const t = await setUp(sequence(status(404)));
    await expect(t.client.userStats('nobody')).rejects.toMatchObject({ status: 404, code: 'bad_request' });
  });

  it('turns a body that is not JSON into an invalid_json error, not a schema error, without retrying', async () => {
    const t = await setUp(
      sequence((res) => json(res, 200, '{"market_id": ')),
      { retries: 2 },
    );
    const error = await t.client.orderBook(MARKET).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamInvalidJsonError);
    expect(error).not.toBeInstanceOf(UpstreamSchemaError);
    expect((error as Error).message).toBe('GET /clob/orderbook: not JSON: {"market_id":');
    expect(t.server.requests).toHaveLength(1);
    expect(outcomes(t.events)).toEqual(['1:invalid_json:200']);
  });

  it('names the endpoint and the first failing field of a body that breaks the schema', async () => {
    const bad = { ...book, bids: [{ ...book.bids[0], price: '0.55' }] };
    const t = await setUp(sequence(ok(bad)), { retries: 2 });
    const error = await t.client.orderBook(MARKET).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamSchemaError);
    expect((error as Error).message).toBe(
      'GET /clob/orderbook: bids.0.price: not a decimal string with 8 decimal places',
    );
    expect((error as UpstreamSchemaError).issues[0]?.path).toBe('bids.0.price');
    expect(t.server.requests).toHaveLength(1);
  });

  it('retries refused connections and then reports a network error', async () => {
    const closed = await startScriptedServer(() => {});
    const baseUrl = closed.url;
    await closed.close();
    client = new UpstreamClient({ baseUrl, retries: 2, retryBaseMs: 1 });
    const events: UpstreamRequestEvent[] = [];
    client.events.on('request', (event) => events.push(event));
    await expect(client.health()).rejects.toBeInstanceOf(UpstreamNetworkError);
    expect(outcomes(events)).toEqual(['1:network_error', '2:network_error', '3:network_error']);
  });
});

describe('UpstreamClient argument checks happen before any request', () => {
  it.each([
    ['orderBook', (c: UpstreamClient) => c.orderBook('not-a-uuid')],
    ['orderBook with a path', (c: UpstreamClient) => c.orderBook(`${MARKET}/../x`)],
    ['market', (c: UpstreamClient) => c.market('../health')],
    ['marketHistory', (c: UpstreamClient) => c.marketHistory('x')],
    ['marketData', (c: UpstreamClient) => c.marketData('')],
    ['clobPrices over 100', (c: UpstreamClient) => c.clobPrices(Array.from({ length: 101 }, () => MARKET))],
    ['clobPrices empty', (c: UpstreamClient) => c.clobPrices([])],
    ['clobPrices one bad id', (c: UpstreamClient) => c.clobPrices([MARKET, 'nope'])],
    [
      'marketDataBatch over 100',
      (c: UpstreamClient) => c.marketDataBatch(Array.from({ length: 101 }, () => MARKET)),
    ],
    ['user dot segment', (c: UpstreamClient) => c.user('..')],
    ['token not an integer', (c: UpstreamClient) => c.token('1/2')],
    ['tokenPrice not hex', (c: UpstreamClient) => c.tokenPrice('feed/../x')],
  ])('%s', async (_name, call) => {
    const t = await setUp(sequence(ok(book)));
    const error = await call(t.client).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamInvalidArgumentError);
    expect((error as UpstreamInvalidArgumentError).code).toBe('bad_request');
    expect(t.server.requests).toHaveLength(0);
    expect(t.events).toHaveLength(0);
  });
});

describe('UpstreamClient load limits', () => {
  it('never has more than `concurrency` requests open and reports the rest as queued', async () => {
    const held: ServerResponse[] = [];
    const t = await setUp((_req, res) => held.push(res), { concurrency: 3 });
    const calls = Array.from({ length: 10 }, () => t.client.orderBook(MARKET));
    await waitFor(() => held.length === 3);
    expect(t.client.load()).toEqual({ inFlight: 3, queued: 7 });
    while (t.server.requests.length < 10 || held.length > 0) {
      const res = held.shift();
      if (res) json(res, 200, book);
      else await waitFor(() => held.length > 0);
    }
    await Promise.all(calls);
    expect(t.server.maxOpen).toBe(3);
    expect(t.client.load()).toEqual({ inFlight: 0, queued: 0 });
  });

  it('holds requests beyond the per-second budget until tokens refill', async () => {
    const held: ServerResponse[] = [];
    const t = await setUp((_req, res) => held.push(res), { rps: 4 });
    const calls = Array.from({ length: 6 }, () => t.client.health());
    await waitFor(() => held.length === 4);
    // A burst of one second's worth started; the other two wait for tokens, not for a slot.
    expect(t.client.load()).toEqual({ inFlight: 4, queued: 2 });
    await waitFor(() => held.length === 6);
    for (const res of held) json(res, 200, health);
    await Promise.all(calls);
  });
});

describe('UpstreamClient cancellation', () => {
  it("rejects with the caller's abort reason and does not retry", async () => {
    const t = await setUp(() => {}, { retries: 2 });
    const controller = new AbortController();
    const call = t.client.orderBook(MARKET, { signal: controller.signal });
    await waitFor(() => t.server.requests.length === 1);
    controller.abort(new Error('caller gave up'));
    await expect(call).rejects.toThrow('caller gave up');
    expect(t.server.requests).toHaveLength(1);
    expect(t.client.load()).toEqual({ inFlight: 0, queued: 0 });
  });

  it('close() ends running and queued calls with an UpstreamError', async () => {
    const t = await setUp(() => {}, { concurrency: 1 });
    const running = t.client.orderBook(MARKET).catch((e: unknown) => e);
    const queued = t.client.orderBook(OTHER_MARKET).catch((e: unknown) => e);
    await waitFor(() => t.server.requests.length === 1);
    await t.client.close();
    for (const error of [await running, await queued]) {
      expect(error).toBeInstanceOf(UpstreamError);
      expect((error as Error).message).toBe('GET /clob/orderbook: upstream client closed');
    }
    await expect(t.client.health()).rejects.toThrow('upstream client closed');
  });
});

describe('methods derived from the endpoint table', () => {
  it('take the row’s arguments, then an optional CallInit, and resolve to the schema’s type', () => {
    expectTypeOf<UpstreamClient['orderBook']>().parameters.toEqualTypeOf<[string, CallInit<OrderBook>?]>();
    expectTypeOf<UpstreamClient['orderBook']>().returns.resolves.toEqualTypeOf<OrderBook>();
    expectTypeOf<UpstreamClient['marketHolders']>().returns.resolves.toEqualTypeOf<HoldersResponse>();
    expectTypeOf<UpstreamClient['userProfile']>().returns.resolves.toEqualTypeOf<UserProfileResponse>();
    expectTypeOf<UpstreamClient['health']>().parameters.toEqualTypeOf<[CallInit<UpstreamHealth>?]>();
  });

  it('fill path parameters and send only the named query fields, in order', async () => {
    const t = await setUp(sequence(status(404)));
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
    const t = await setUp(sequence(status(404)));
    const aborted = AbortSignal.abort(new Error('caller gave up'));
    await expect(t.client.markets(undefined, { signal: aborted })).rejects.toThrow('caller gave up');
    await expect(t.client.marketComments(MARKET, undefined, { signal: aborted })).rejects.toThrow(
      'caller gave up',
    );
    await expect(t.client.health({ signal: aborted })).rejects.toThrow('caller gave up');
    expect(t.server.requests).toHaveLength(0);
  });
});
