/**
 * The protocol's error codes and limits for `book` and `price` (protocol.md "Error codes",
 * "Close codes", "Transport"): each one provoked against a real relay, and checked not to disturb
 * the offending connection's other streams or other clients.
 */
import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { RelayConfig } from '../../src/relay-server.ts';
import { ProtocolClient } from '../support/clients/protocol-client.ts';
import { type Harness, useHarness } from '../support/harness.ts';
import { waitFor } from '../support/wait-for.ts';

/** What `ws` hands over for an upgrade refused with a plain HTTP answer. */
interface RefusedResponse {
  statusCode: number;
  statusMessage: string;
}

const unknownMarket = '00000000-0000-4000-8000-000000000000';

describe('WebSocket endpoint: errors and limits', () => {
  let harness: Harness | undefined;
  const { opened: clients, start: startTestHarness } = useHarness();

  async function start(relay: Partial<RelayConfig> = {}): Promise<Harness> {
    harness = await startTestHarness({ sim: { markets: 4, tickMs: 50 }, relay });
    return harness;
  }
  async function connect(options?: WebSocket.ClientOptions, query = ''): Promise<ProtocolClient> {
    const client = await ProtocolClient.connect(`${harness!.relay.url}/v1/ws${query}`, options);
    clients.push(client);
    return client;
  }

  it('answers bad requests with bad_request and keeps the connection and its streams', async () => {
    const { sim } = await start();
    const market = sim.market.marketIds()[0]!;
    const client = await connect();
    const bystander = await connect();
    await bystander.request({ op: 'subscribe', channel: 'book', markets: [market] });
    await client.request({ op: 'subscribe', channel: 'price', markets: [market] });

    const bad: unknown[] = [
      'not json',
      '[]',
      { op: 'dance', id: 1 },
      { op: 'subscribe', id: 2, channel: 'book', markets: ['not-a-uuid'] },
      { op: 'subscribe', id: 3, channel: 'book', markets: 'x' },
      { op: 'subscribe', id: 4, channel: 'book', markets: Array.from({ length: 101 }, () => market) },
      { op: 'subscribe', id: 5, channel: 'price', markets: [market], depth: 10 },
      { op: 'subscribe', id: 6, channel: 'book', markets: [market], depth: 7 },
      // Half a surrogate pair, as a JSON escape spells it: no path can be percent-encoded from it.
      { op: 'subscribe', id: 7, channel: 'rest', paths: ['/api/users/\ud800'] },
    ];
    for (const frame of bad) client.send(frame);
    // Only the answers to the bad frames: on a loaded machine the price stream may also report
    // upstream_unavailable before its first poll succeeds, which is not what this test is about.
    const answers = () => client.of('error').filter((e) => e.code !== 'upstream_unavailable');
    await waitFor('nine bad_request errors', () => answers().length >= bad.length);
    expect(answers().map((e) => [e.code, e.id])).toEqual([
      ['bad_request', undefined],
      ['bad_request', undefined],
      ['bad_request', 1],
      ['bad_request', 2],
      ['bad_request', 3],
      ['bad_request', 4],
      ['bad_request', 5],
      ['bad_request', 6],
      ['bad_request', 7],
    ]);
    for (const error of client.of('error')) expect(error.message).toEqual(expect.any(String));

    // Still connected, still streaming; the other client never noticed.
    expect((await client.request({ op: 'ping' })).type).toBe('pong');
    const seq = client.view('price', market)?.seq ?? 0;
    const bystanderSeq = bystander.view('book', market)?.seq ?? 0;
    await waitFor('more price updates', () => (client.view('price', market)?.seq ?? 0) > seq);
    await waitFor(
      'more book updates for the bystander',
      () => (bystander.view('book', market)?.seq ?? 0) > bystanderSeq,
    );
    expect(bystander.of('error')).toEqual([]);
    expect(client.violations).toEqual([]);
  });

  it('answers unknown_channel for a channel the protocol does not have', async () => {
    const { sim } = await start();
    const client = await connect();
    const reply = await client.request({
      op: 'subscribe',
      channel: 'tickers',
      markets: [sim.market.marketIds()[0]],
    });
    expect(reply).toMatchObject({ type: 'error', code: 'unknown_channel', channel: 'tickers' });
    const unsubscribe = await client.request({
      op: 'unsubscribe',
      channel: 'tickers',
      markets: [unknownMarket],
    });
    expect(unsubscribe).toMatchObject({ type: 'error', code: 'unknown_channel' });
  });

  it('answers unknown_market on the first poll of a market upstream does not have, for book and price', async () => {
    await start();
    const client = await connect();
    expect(
      await client.request({ op: 'subscribe', channel: 'book', markets: [unknownMarket] }),
    ).toMatchObject({
      type: 'subscribed',
    });
    await client.request({ op: 'subscribe', channel: 'price', markets: [unknownMarket] });
    await waitFor('two unknown_market errors', () => client.of('error').length === 2);
    expect(client.of('error')).toEqual([
      expect.objectContaining({ code: 'unknown_market', market: unknownMarket, channel: expect.any(String) }),
      expect.objectContaining({ code: 'unknown_market', market: unknownMarket, channel: expect.any(String) }),
    ]);
    // The subscription dropped: no stream remains and nothing is polled for it.
    await waitFor('streams dropped', () => harness!.relay.registry.size === 0);

    // Asked again, the relay answers from memory: no further upstream request for that id.
    const asked = () => harness!.sim.requests.filter((r) => JSON.stringify(r).includes(unknownMarket)).length;
    const before = asked();
    const again = await client.request({ op: 'subscribe', channel: 'book', markets: [unknownMarket] });
    expect(again).toMatchObject({ type: 'subscribed' });
    await waitFor('the third unknown_market', () => client.of('error').length === 3);
    expect(client.of('error')[2]).toMatchObject({
      code: 'unknown_market',
      channel: 'book',
      market: unknownMarket,
    });
    expect(harness!.relay.registry.size).toBe(0);
    expect(asked()).toBe(before);
  });

  it('closes a stream whose market disappears upstream with status closed', async () => {
    const { sim } = await start();
    const market = sim.market.marketIds()[1]!;
    const client = await connect();
    await client.request({ op: 'subscribe', channel: 'book', markets: [market] });
    await waitFor('snapshot', () => client.view('book', market));
    sim.market.removeMarket(market);
    await waitFor('status closed', () => client.of('status').find((s) => s.state === 'closed'));
    expect(client.of('status').at(-1)).toMatchObject({ channel: 'book', market, state: 'closed' });
    await waitFor('stream dropped', () => harness!.relay.registry.size === 0);
  });

  it('refuses more streams than the per-connection limit with limit_exceeded', async () => {
    const { sim } = await start({ tuning: { connection: { maxStreams: 3 } } });
    const [a, b, c, d] = sim.market.marketIds() as [string, string, string, string];
    const client = await connect();
    await client.request({ op: 'subscribe', channel: 'book', markets: [a, b] });
    expect(await client.request({ op: 'subscribe', channel: 'price', markets: [c, d] })).toMatchObject({
      type: 'error',
      code: 'limit_exceeded',
    });
    // Re-subscribing to what one has is not a new stream, and a third stream still fits.
    expect(await client.request({ op: 'subscribe', channel: 'book', markets: [a, b] })).toMatchObject({
      type: 'subscribed',
    });
    expect(await client.request({ op: 'subscribe', channel: 'price', markets: [c] })).toMatchObject({
      type: 'subscribed',
    });
  });

  it('answers one rate_limited per second past the request rate, drops the rest unread, then serves again', async () => {
    await start({ tuning: { connection: { requestsPerSecond: 5, requestBurst: 5 } } });
    const client = await connect();
    for (let i = 0; i < 12; i++) client.send({ op: 'ping', id: i });
    await waitFor(
      'the burst answered and one refusal',
      () => client.of('pong').length >= 5 && client.of('error').length >= 1,
    );
    // Over the rate a frame is not parsed: the one error has no id, and the rest get no answer.
    expect(client.of('error')).toEqual([
      expect.objectContaining({ code: 'rate_limited', message: 'more than 5 requests per second' }),
    ]);
    expect(client.of('error')[0]!.id).toBeUndefined();
    // Dropped frames get no answer at all, so keep asking until the refilled bucket lets one through.
    let attempt = 0;
    await waitFor(
      'the bucket to refill',
      () => {
        client.send({ op: 'ping', id: `again-${attempt++}` });
        return client.of('pong').some((pong) => String(pong.id).startsWith('again-'));
      },
      { timeoutMs: 5_000, everyMs: 300 },
    );
    expect(client.of('pong').filter((pong) => typeof pong.id === 'number').length).toBeLessThan(12); // dropped, unanswered
    expect(client.of('error')).toHaveLength(1);
    expect(client.closeCode).toBeUndefined();
  });

  it('answers ping with pong and the same id', async () => {
    await start();
    const client = await connect();
    expect(await client.request({ op: 'ping' })).toMatchObject({ type: 'pong', ts: expect.any(String) });
  });

  it('unsubscribes, ignoring unknown pairs, and stops polling after the linger', async () => {
    const { sim } = await start({ tuning: { lingerMs: 50 } });
    const market = sim.market.marketIds()[0]!;
    const client = await connect();
    await client.request({ op: 'subscribe', channel: 'book', markets: [market] });
    await waitFor('snapshot', () => client.view('book', market));
    const reply = await client.request({
      op: 'unsubscribe',
      channel: 'book',
      markets: [market, unknownMarket],
    });
    expect(reply).toMatchObject({ type: 'unsubscribed', channel: 'book', markets: [market, unknownMarket] });
    await waitFor('no polled markets', () => harness!.relay.poller.bookMarketCount === 0);
    const seen = client.messages.length;
    sim.clearRequests();
    sim.tick();
    await waitFor('a quiet moment', () => harness!.relay.registry.size === 0);
    expect(client.messages.slice(seen).filter((m) => m.type === 'update')).toEqual([]);
    expect(sim.requests.filter((r) => r.path === '/clob/orderbook')).toEqual([]);
  });

  it('requires an API key when keys are set: 401 before upgrade, Bearer or ?token accepted', async () => {
    await start({ apiKeys: ['k1', 'k2'] });
    const url = `${harness!.relay.url.replace('http', 'ws')}/v1/ws`;
    const refused = new WebSocket(url);
    const [, response] = (await once(refused, 'unexpected-response')) as [unknown, RefusedResponse];
    expect(response).toMatchObject({ statusCode: 401, statusMessage: 'Unauthorized' });
    // Wrong keys of every length, including a prefix and an extension of a valid one.
    for (const key of ['nope', 'k', 'k22', 'k1k1k1k1k1k1k1k1k1k1k1k1k1k1k1k1k1k1']) {
      const wrong = new WebSocket(url, { headers: { authorization: `Bearer ${key}` } });
      const [, wrongResponse] = (await once(wrong, 'unexpected-response')) as [unknown, RefusedResponse];
      expect(wrongResponse.statusCode).toBe(401);
    }
    const bearer = await connect({ headers: { authorization: 'Bearer k2' } });
    expect((await bearer.request({ op: 'ping' })).type).toBe('pong');
    const lowerCase = await connect({ headers: { authorization: 'bearer k1' } }); // the scheme is case-insensitive
    expect((await lowerCase.request({ op: 'ping' })).type).toBe('pong');
    const token = await connect({}, '?token=k1');
    expect((await token.request({ op: 'ping' })).type).toBe('pong');
  });

  it('answers 404 to an upgrade on any other path', async () => {
    await start();
    const elsewhere = new WebSocket(`${harness!.relay.url.replace('http', 'ws')}/v2/ws`);
    const [, response] = (await once(elsewhere, 'unexpected-response')) as [unknown, RefusedResponse];
    expect(response).toMatchObject({ statusCode: 404, statusMessage: 'Not Found' });
  });

  it('refuses origins off the allow-list with 403, without echoing them; its own origin is always allowed', async () => {
    await start({ allowedOrigins: ['https://ui.example'] });
    const url = `${harness!.relay.url.replace('http', 'ws')}/v1/ws`;
    const refused = new WebSocket(url, { origin: 'https://evil.example' });
    const [, response] = (await once(refused, 'unexpected-response')) as [unknown, IncomingMessage];
    expect(response).toMatchObject({ statusCode: 403, statusMessage: 'Forbidden' });
    const body = await new Promise<string>((resolve) => {
      let text = '';
      response.on('data', (chunk: Buffer) => {
        text += chunk.toString();
      });
      response.on('end', () => resolve(text));
    });
    expect(JSON.parse(body)).toMatchObject({ error: 'forbidden' });
    expect(body).not.toContain('evil');
    const allowed = await connect({ origin: 'https://ui.example' });
    expect((await allowed.request({ op: 'ping' })).type).toBe('pong');
    // The status page this relay serves, connecting back to the relay's own host.
    const own = await connect({ origin: harness!.relay.url });
    expect((await own.request({ op: 'ping' })).type).toBe('pong');
  });

  it('closes with 1009 on a frame larger than the limit', async () => {
    await start({ tuning: { maxFrameBytes: 1024 } });
    const client = await connect();
    client.send({ op: 'ping', id: 'x'.repeat(2048) });
    await waitFor('close', () => client.closeCode);
    expect(client.closeCode).toBe(1009);
  });

  it('closes with 1007 on a text frame that is not UTF-8, counted as closed by the relay', async () => {
    await start();
    const client = await connect();
    client.ws.send(Buffer.from([0x7b, 0xc3, 0x28, 0x7d]), { binary: false });
    await waitFor('close', () => client.closeCode);
    expect(client.closeCode).toBe(1007);
    const metrics = await waitFor('the close counted', async () => {
      const text = await (await fetch(`${harness!.relay.url}/metrics`)).text();
      return text.includes('connections_closed_total{') ? text : undefined;
    });
    expect(metrics).toContain('market_relay_connections_closed_total{code="1007",by="relay"} 1');
  });

  it('answers 426 Upgrade Required to a plain GET of the WebSocket path', async () => {
    await start();
    const response = await fetch(`${harness!.relay.url}/v1/ws`);
    expect(response.status).toBe(426);
    expect(response.headers.get('upgrade')).toBe('websocket');
    expect(await response.json()).toEqual({
      error: 'upgrade_required',
      message: 'GET /v1/ws is a WebSocket endpoint: connect with a WebSocket client (docs/protocol.md)',
    });
  });

  it('closes with 4029 past the connection limit', async () => {
    await start({ tuning: { maxConnections: 1 } });
    await connect();
    const second = await connect();
    await waitFor('close', () => second.closeCode);
    expect(second.closeCode).toBe(4029);
  });

  it('sends heartbeats with a per-connection counter and closes a client that ignores pings with 4008', async () => {
    await start({ tuning: { heartbeatMs: 40 } });
    const client = await connect();
    await waitFor('three heartbeats', () => client.of('heartbeat').length >= 3);
    expect(
      client
        .of('heartbeat')
        .slice(0, 3)
        .map((h) => h.n),
    ).toEqual([1, 2, 3]);
    const deaf = await connect({ autoPong: false });
    await waitFor('the deaf client closed', () => deaf.closeCode, { timeoutMs: 5_000 });
    expect(deaf.closeCode).toBe(4008);
    expect(client.closeCode).toBeUndefined();
  });
});
