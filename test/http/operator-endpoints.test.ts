/**
 * The operator endpoints kept safe on a public relay: a bounded status feed (a viewer that does not
 * read is dropped, viewers are capped, a reading viewer is unaffected), the operator key, the
 * operator port (nothing operational left on the public port), and security headers on the page.
 */
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { PAGE_CSP } from '../../src/http/security-headers.ts';
import type { StatusSnapshot } from '../../src/observability/status-snapshot.ts';
import { ProtocolClient } from '../support/clients/protocol-client.ts';
import { sseEvents } from '../support/clients/sse.ts';
import { SseClient } from '../support/clients/sse-client.ts';
import { type Harness, startHarness } from '../support/harness.ts';
import { waitFor } from '../support/wait-for.ts';

const OPERATOR_KEY = 'operator-key-0123456789';

/** A viewer that asks for the feed and then never reads a byte. */
async function nonReadingViewer(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  await once(socket, 'connect');
  socket.on('error', () => {
    // dropped by the relay: expected
  });
  socket.pause();
  socket.write(`GET /status/events HTTP/1.1\r\nHost: ${hostname}:${port}\r\n\r\n`);
  return socket;
}

describe('operator endpoints', () => {
  let harness: Harness | undefined;
  const sockets: Socket[] = [];
  const clients: (ProtocolClient | SseClient)[] = [];
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.destroy();
    await Promise.all(clients.splice(0).map((client) => client.close()));
    await harness?.stop();
    harness = undefined;
  });

  it('drops a status feed viewer that does not read, and keeps feeding one that does', async () => {
    harness = await startHarness({
      sim: { markets: 40 },
      relay: { tuning: { statusFeed: { pushMs: 2, viewerBufferBytes: 16 * 1024 } } },
    });
    const { url } = harness.relay;
    // Streams make each snapshot larger, so a stalled viewer's backlog grows quickly.
    const watcher = await ProtocolClient.connect(`${url}/v1/ws`);
    clients.push(watcher);
    const markets = harness.sim.market.marketIds();
    await watcher.request({ op: 'subscribe', channel: 'book', markets, depth: 10 });
    await watcher.request({ op: 'subscribe', channel: 'price', markets });

    const reader = await fetch(`${url}/status/events`);
    let received = 0;
    const reading = (async () => {
      for await (const { data } of sseEvents(reader)) {
        JSON.parse(data) as StatusSnapshot;
        received += 1;
      }
    })();
    const stalled = await nonReadingViewer(url);
    sockets.push(stalled);
    const feed = harness.relay.operations.statusFeed!;
    await waitFor('both viewers', () => feed.viewers === 2);

    await waitFor('the stalled viewer to be dropped', () => feed.dropped === 1, { timeoutMs: 20_000 });
    expect(feed.viewers).toBe(1);
    // The reading viewer still gets fresh snapshots.
    const before = received;
    await waitFor('more snapshots for the reading viewer', () => received > before + 10);
    expect(feed.dropped).toBe(1);
    await harness.stop();
    harness = undefined;
    await reading;
  });

  it('caps the viewers at once with 503 too_many_viewers, and admits one again when a viewer leaves', async () => {
    harness = await startHarness({ relay: { tuning: { statusFeed: { maxViewers: 2 } } } });
    const { url } = harness.relay;
    const first = new AbortController();
    await fetch(`${url}/status/events`, { signal: first.signal });
    await fetch(`${url}/status/events`);
    const refused = await fetch(`${url}/status/events`);
    expect(refused.status).toBe(503);
    expect(await refused.json()).toMatchObject({ error: 'too_many_viewers' });
    first.abort();
    await waitFor('a free viewer slot', () => harness!.relay.operations.statusFeed!.viewers === 1);
    expect((await fetch(`${url}/status/events`)).status).toBe(200);
  });

  it('puts every operator endpoint behind the operator key, but not /health or the WebSocket', async () => {
    harness = await startHarness({ relay: { operatorKey: OPERATOR_KEY } });
    const { url } = harness.relay;
    for (const path of [
      '/',
      '/metrics',
      '/status/snapshot',
      '/status/markets',
      '/status/events',
      '/assets/client.js',
    ]) {
      const refused = await fetch(`${url}${path}`);
      expect(refused.status, path).toBe(401);
      expect(await refused.json()).toMatchObject({ error: 'unauthorized' });
      expect(
        (await fetch(`${url}${path}`, { headers: { authorization: `bearer ${OPERATOR_KEY}` } })).status,
      ).toBe(200);
    }
    expect((await fetch(`${url}/metrics`, { headers: { authorization: 'Bearer wrong-key' } })).status).toBe(
      401,
    );
    expect((await fetch(`${url}/health`)).status).toBe(200);
    const client = await ProtocolClient.connect(`${url}/v1/ws`);
    clients.push(client);
    expect((await client.request({ op: 'ping' })).type).toBe('pong');

    // A browser: the key once in the URL, then a cookie, and the URL without it.
    const login = await fetch(`${url}/?operator_key=${OPERATOR_KEY}&token=t`, { redirect: 'manual' });
    expect(login.status).toBe(303);
    expect(login.headers.get('location')).toBe('/?token=t');
    const cookie = login.headers.get('set-cookie')!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    const page = await fetch(`${url}/?token=t`, { headers: { cookie: cookie.split(';')[0]! } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<html');
  });

  it('serves the operator endpoints on the operator port only, with the page, its WebSocket and SSE working there', async () => {
    harness = await startHarness({ relay: { operatorPort: 0, operatorHost: '127.0.0.1' } });
    const { url, operatorUrl } = harness.relay;
    expect(operatorUrl).toBeDefined();
    for (const path of ['/', '/metrics', '/status/snapshot', '/status/events']) {
      expect((await fetch(`${url}${path}`)).status, `public ${path}`).toBe(404);
      const operated = await fetch(`${operatorUrl}${path}`);
      expect(operated.status, `operator ${path}`).toBe(200);
      await operated.body?.cancel();
    }
    expect((await fetch(`${url}/health`)).status).toBe(200);
    const [market] = harness.sim.market.marketIds() as [string];
    for (const base of [url, operatorUrl!]) {
      const client = await ProtocolClient.connect(`${base}/v1/ws`, { origin: base });
      clients.push(client);
      expect((await client.request({ op: 'ping' })).type).toBe('pong');
      // The status page's `?transport=sse` book view uses the SSE endpoint of its own origin.
      const events = await SseClient.connect(`${base}/v1/sse?channel=price&markets=${market}`, {
        origin: base,
      });
      clients.push(events);
      expect(events.status, base).toBe(200);
      await waitFor(`a price snapshot over SSE from ${base}`, () => events.of('snapshot').length === 1);
    }
    expect(harness.relay.sse.connections.size).toBe(2);
  });

  it('sends security headers: a CSP that forbids framing on HTML pages, nosniff and no referrer everywhere', async () => {
    harness = await startHarness();
    const { url } = harness.relay;
    const page = await fetch(url);
    expect(page.headers.get('content-security-policy')).toBe(PAGE_CSP);
    expect(PAGE_CSP).toContain("frame-ancestors 'none'");
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    for (const path of ['/', '/health', '/metrics', '/assets/status/status.js', '/nope']) {
      const response = await fetch(`${url}${path}`);
      expect(response.headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(response.headers.get('referrer-policy'), path).toBe('no-referrer');
    }
  });
});
