/**
 * The status page's HTTP side: static files (and nothing outside their folder), the SDK bundle, the
 * market picker's cached upstream list, the status snapshot and its SSE feed (which must not hold
 * shutdown up), and that these operator endpoints need no API key.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { StatusSnapshot } from '../../src/observability/status-snapshot.ts';
import { ProtocolClient } from '../support/clients/protocol-client.ts';
import { sseEvents } from '../support/clients/sse.ts';
import { type Harness, useHarness } from '../support/harness.ts';
import { waitFor } from '../support/wait-for.ts';

interface Markets {
  markets: { id: string; title: string; status: string; volume: number; expiresAt: string }[];
}

describe('status page endpoints', () => {
  let harness: Harness;
  const { opened: clients, start: startTestHarness } = useHarness();

  it('serves the page and its assets from disk, and nothing outside their folder', async () => {
    harness = await startTestHarness();
    const { url } = harness.relay;
    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await page.text()).toContain('src="/assets/status/status.js"');
    const css = await fetch(`${url}/assets/status/status.css`);
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);
    for (const sheet of ['book.css', 'tabs.css']) {
      const more = await fetch(`${url}/assets/status/${sheet}`);
      expect(more.headers.get('content-type')).toMatch(/^text\/css/);
    }
    for (const view of [
      'live-view.js',
      'book-view.js',
      'channel-view.js',
      'catalogue-view.js',
      'users-view.js',
    ]) {
      const script = await fetch(`${url}/assets/status/${view}`);
      expect(script.headers.get('content-type')).toMatch(/^text\/javascript/);
    }
    // The views reach the relay through the SDK the relay bundles.
    expect(await (await fetch(`${url}/assets/status/view-parts.js`)).text()).toContain(
      "from '/assets/client.js'",
    );
    for (const path of ['nope.js', '..%2Fhealth.ts', '..%2F..%2Fcli.ts', 'STATUS.JS']) {
      expect((await fetch(`${url}/assets/status/${path}`)).status).toBe(404);
    }
  });

  it('serves the client SDK bundle the build made, an ES module exporting connect', async () => {
    harness = await startTestHarness();
    const first = await fetch(`${harness.relay.url}/assets/client.js`);
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toMatch(/^text\/javascript/);
    const code = await first.text();
    expect(code).toMatch(/export\s*\{[^}]*\bconnect\b/);
    expect(code).not.toMatch(/\bfrom\s*["'](node:|ws["'])/);
    // The relay validates requests with zod; the SDK reads frames without it (protocol/ header notes).
    expect(code).not.toMatch(/ZodError|\$ZodType/);
    expect(await (await fetch(`${harness.relay.url}/assets/client.js`)).text()).toBe(code);
  });

  it('lists active upstream markets for the picker, searchable, from a short cache', async () => {
    harness = await startTestHarness({ sim: { markets: 20 } });
    const { url } = harness.relay;
    harness.sim.clearRequests();
    const all = (await (await fetch(`${url}/status/markets`)).json()) as Markets;
    expect(all.markets.length).toBeGreaterThan(0);
    expect(all.markets.every((market) => market.status === 'ACTIVE' && market.title !== '')).toBe(true);
    const title = all.markets[0]!.title;
    const found = (await (
      await fetch(`${url}/status/markets?q=${encodeURIComponent(title.toUpperCase())}`)
    ).json()) as Markets;
    expect(found.markets.map((market) => market.title)).toContain(title);
    expect(found.markets.every((market) => market.title.toLowerCase().includes(title.toLowerCase()))).toBe(
      true,
    );
    const listed = harness.sim.requests.filter((request) => request.path === '/api/markets').length;
    expect(listed).toBeGreaterThan(0);
    await fetch(`${url}/status/markets`);
    expect(harness.sim.requests.filter((request) => request.path === '/api/markets').length).toBe(listed);
  });

  it('lists expired and resolved markets too, each with its expiry, by ?status=, every page of them', async () => {
    // Upstream serving 20 a page: the list still holds every market.
    harness = await startTestHarness({ sim: { markets: 45, profile: 'capped' } });
    const { url } = harness.relay;
    const list = async (status: string) =>
      ((await (await fetch(`${url}/status/markets?status=${status}`)).json()) as Markets).markets;
    const all = await list('all');
    expect(all).toHaveLength(45);
    expect(new Set(all.map((market) => market.status))).toEqual(new Set(['ACTIVE', 'EXPIRED', 'RESOLVED']));
    for (const market of all) {
      expect(Date.parse(market.expiresAt)).toBe(harness.sim.market.market(market.id)!.expiresAt);
    }
    const expired = await list('expired');
    expect(expired.length).toBeGreaterThan(0);
    expect(expired.every((market) => market.status === 'EXPIRED')).toBe(true);
    expect((await list('resolved')).every((market) => market.status === 'RESOLVED')).toBe(true);
    expect((await list('all')).length).toBe(
      (await list('active')).length + expired.length + (await list('resolved')).length,
    );
    const bad = await fetch(`${url}/status/markets?status=gone`);
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({
      error: 'bad_request',
      message: 'status: got "gone", expected one of active, expired, resolved, all',
    });
  });

  it('answers 502 for the market list while upstream is failing', async () => {
    harness = await startTestHarness({ relay: { tuning: { upstreamRetries: 0 } } });
    harness.sim.setFaults({ errorRate: 1 });
    const response = await fetch(`${harness.relay.url}/status/markets`);
    expect(response.status).toBe(502);
    expect(await response.json()).toMatchObject({ error: 'upstream_unavailable' });
  });

  it('describes every stream in the snapshot and pushes it every second over SSE', async () => {
    harness = await startTestHarness();
    const { url } = harness.relay;
    const [market] = harness.sim.market.marketIds() as [string];
    await fetch(`${url}/status/markets`);
    const client = await ProtocolClient.connect(url);
    clients.push(client);
    await client.request({ op: 'subscribe', channel: 'book', markets: [market], depth: 10 });
    await waitFor('a snapshot', () => client.view('book', market, 10));

    const snapshot = (await (await fetch(`${url}/status/snapshot`)).json()) as StatusSnapshot;
    expect(snapshot.health.status).toBe('ok');
    expect(snapshot.health.connections).toBe(1);
    expect(snapshot.streams).toEqual([
      expect.objectContaining({
        channel: 'book',
        market,
        title: expect.stringMatching(/\S/),
        depth: 10,
        state: 'live',
        seq: 1,
        subscribers: 1,
        pollIntervalMs: 20,
        recordFrom: null,
      }),
    ]);
    expect(snapshot.streams[0]!.lastSnapshotAgeMs).toBeGreaterThanOrEqual(0);
    expect(snapshot.upstream.latencyMs.length).toBeGreaterThan(0);

    // Left open: the relay ends it on shutdown (afterEach).
    const feed = await fetch(`${url}/status/events`);
    expect(feed.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = sseEvents(feed);
    const first = (await events.next()).value!;
    expect(first.event).toBe('status');
    expect((JSON.parse(first.data) as StatusSnapshot).streams).toHaveLength(1);
    const second = JSON.parse((await events.next()).value!.data) as StatusSnapshot;
    expect(Date.parse(second.now)).toBeGreaterThan(Date.parse(JSON.parse(first.data).now));
  });

  it("shows where each stream's record starts when the relay records", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'status-record-'));
    try {
      harness = await startTestHarness({
        relay: { history: { store: 'embedded', dataDir, retentionMs: 3_600_000, maxBytes: 1024 ** 3 } },
      });
      const { url } = harness.relay;
      const [market] = harness.sim.market.marketIds() as [string];
      const client = await ProtocolClient.connect(url);
      clients.push(client);
      const subscribedAt = Date.now();
      await client.request({ op: 'subscribe', channel: 'book', markets: [market], depth: 10 });
      await waitFor('a snapshot', () => client.view('book', market, 10));
      await harness.relay.history?.flush();
      const recordFrom = await waitFor(
        'the record start on the status snapshot',
        async () => {
          const snapshot = (await (await fetch(`${url}/status/snapshot`)).json()) as StatusSnapshot;
          return snapshot.streams[0]?.recordFrom ?? undefined;
        },
        { timeoutMs: 20_000, everyMs: 200 },
      );
      expect(Date.parse(recordFrom)).toBeGreaterThanOrEqual(subscribedAt - 1_000);
      expect(Date.parse(recordFrom)).toBeLessThanOrEqual(Date.now());
    } finally {
      await harness.relay.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('does not let an open SSE feed hold up shutdown', async () => {
    harness = await startTestHarness();
    const feed = await fetch(`${harness.relay.url}/status/events`);
    const events = sseEvents(feed);
    await events.next();
    await harness.relay.close();
    // The feed ends instead of hanging.
    for await (const _event of events) {
      // drain what was in flight
    }
  });

  it('serves the operator endpoints without a key when the relay has API keys', async () => {
    harness = await startTestHarness({ relay: { apiKeys: ['secret-key'] } });
    const { url } = harness.relay;
    for (const path of ['/', '/metrics', '/status/snapshot', '/status/markets', '/health']) {
      expect((await fetch(`${url}${path}`)).status, path).toBe(200);
    }
    await expect(ProtocolClient.connect(url)).rejects.toThrow(/401/);
    const client = await ProtocolClient.connect(`${url}/v1/ws?token=secret-key`);
    clients.push(client);
    expect((await client.request({ op: 'ping' })).type).toBe('pong');
  });
});
