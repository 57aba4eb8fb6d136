/**
 * The status page in a real browser (Debian's chromium driven by playwright-core): on a relay over a
 * live simulator it fills the markets table from the SSE feed and the picker from upstream, opens a
 * market's book view (the client SDK bundled by the relay) and sees the book change in place, and
 * picks each other channel of that market in the tabs (trades, market record, probabilities, its oracle
 * feed, orders) and sees its data, over the WebSocket and over SSE, and
 * takes a screenshot, under the page's Content-Security-Policy and an `--allowed-origins` list that
 * does not name the relay. `npm run screenshot` (UPDATE_SCREENSHOT=1) saves it as the README's
 * docs/status-page.png; a plain test run leaves the working tree alone and saves it to a temp dir.
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../support/harness.ts';
import { ProtocolClient } from '../support/protocol-client.ts';
import { waitFor } from '../support/wait-for.ts';

const CHROMIUM = '/usr/bin/chromium';
const SCREENSHOT = process.env.UPDATE_SCREENSHOT
  ? fileURLToPath(new URL('../../docs/status-page.png', import.meta.url))
  : join(mkdtempSync(join(tmpdir(), 'market-relay-')), 'status-page.png');
const available = existsSync(CHROMIUM);
// In CI the browser is part of the job's set-up: a missing one must fail, not skip.
const run = available || process.env.CI !== undefined;
if (!run)
  process.stdout.write('status page browser test skipped: install chromium (apt-get install chromium)\n');

describe.runIf(run)('status page in a browser', () => {
  let harness: Harness;
  let browser: Browser;
  let page: Page;
  let watcher: ProtocolClient;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    harness = await startHarness({
      sim: { markets: 20, tickMs: 100 },
      // An allow-list without the relay itself: its own page must still connect (and its CSP must
      // not block anything the page does: a violation is a console error, checked below).
      // Compression on, so that Chromium's book view runs over permessage-deflate.
      relay: { bookPollMs: 100, pricePollMs: 100, allowedOrigins: ['https://ui.example'], compression: true },
    });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
        '--disable-quic',
      ],
    });
    page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') pageErrors.push(message.text());
    });
  });
  afterAll(async () => {
    await browser?.close();
    await watcher?.close();
    await harness?.stop();
  });

  /** Waits for the book view to draw a snapshot, then to apply updates in place (the SDK checks each). */
  async function bookViewChanging() {
    const book = page.locator('#book-view');
    await waitFor(
      'the book view to draw a snapshot',
      async () => (await book.getAttribute('data-seq')) !== null,
      {
        timeoutMs: 15_000,
      },
    );
    const firstSeq = Number(await book.getAttribute('data-seq'));
    await waitFor(
      'the book to change in place',
      async () =>
        Number(await book.getAttribute('data-seq')) > firstSeq &&
        Number(await book.getAttribute('data-updates')) >= 2,
      { timeoutMs: 15_000 },
    );
    return book;
  }

  it('shows live markets and opens a live order book', async () => {
    // Another client already watches a few markets, as on a running relay.
    const markets = harness.sim.market.marketIds();
    // Without compression, so that the one compressing connection below is the browser's.
    watcher = await ProtocolClient.connect(harness.relay.url, { perMessageDeflate: false });
    await watcher.request({ op: 'subscribe', channel: 'book', markets: markets.slice(0, 3), depth: 10 });
    await watcher.request({ op: 'subscribe', channel: 'price', markets: markets.slice(0, 2) });

    await page.goto(harness.relay.url);
    await page.waitForSelector('#streams-body tr[data-market][data-state="live"]', { timeout: 10_000 });
    expect(await page.locator('#streams-body tr[data-market]').count()).toBe(5);
    await page.waitForSelector('#market-list li[data-market]', { timeout: 10_000 });
    expect(await page.locator('#market-list li[data-market]').count()).toBeGreaterThan(0);

    // Search narrows the picker by title.
    const firstTitle = (await page.locator('#market-list li[data-market] span').first().textContent()) ?? '';
    await page.fill('#market-search', firstTitle);
    await waitFor('the picker to filter', async () => {
      const titles = await page.locator('#market-list li[data-market] span:first-child').allTextContents();
      return titles.length > 0 && titles.every((title) => title === firstTitle);
    });
    const chosen = await page.locator('#market-list li[data-market]').first().getAttribute('data-market');
    await page.locator('#market-list li[data-market]').first().click();

    await bookViewChanging();
    // Chromium offered permessage-deflate: the page's book came as the relay's shared compressed
    // frames, and the SDK applied them (it checks seq and checksum of every update).
    expect([...harness.relay.ws.connections].map((connection) => connection.compresses)).toContain(true);
    expect(harness.relay.ws.connections.size).toBe(2);
    const bestBid = await page.locator('#book-view tr.bid td.price').first().textContent();
    expect(bestBid).toMatch(/^\d+\.\d+$/);
    expect(await page.locator('#book-view .price-cell.mid .value').textContent()).toMatch(/^\d+\.\d+$/);
    // The relay now polls the chosen market for the page's own subscription too.
    await page.waitForSelector(`#streams-body tr[data-market="${chosen}"]`, { timeout: 5_000 });
    await waitFor('the update rate to show', async () => (await page.textContent('#update-rate')) !== '0.0', {
      timeoutMs: 8_000,
    });

    // The README's picture: the whole picker, not the search above.
    await page.fill('#market-search', '');
    await page.screenshot({ path: SCREENSHOT });
    expect(readFileSync(SCREENSHOT).subarray(1, 4).toString()).toBe('PNG');
    expect(pageErrors).toEqual([]);
  });

  it('shows whole titles, and lets expired and resolved markets be picked', async () => {
    // Stream titles are not cut: markets on one asset differ only by the expiry at the end.
    const cell = page.locator('#streams-body tr[data-market] td.title').first();
    const market = await cell.evaluate((element) => element.parentElement?.dataset.market ?? '');
    const { title } = await (await fetch(`${harness.sim.url}/api/markets/${market}`))
      .json()
      .then((body: { market: { title: string } }) => body.market);
    expect(await cell.textContent()).toBe(title);
    expect(await cell.evaluate((element) => element.scrollWidth <= element.clientWidth)).toBe(true);

    for (const status of ['EXPIRED', 'RESOLVED']) {
      await page.selectOption('#market-status', status);
      const items = page.locator('#market-list li[data-market]');
      await waitFor(`${status} markets listed`, async () => (await items.count()) > 0);
      const ids = await items.evaluateAll((elements) =>
        elements.map((element) => element.getAttribute('data-market')),
      );
      for (const id of ids) expect(harness.sim.market.market(id!)?.status).toBe(status);
      const details = await items.locator('.details').first().textContent();
      expect(details).toMatch(status === 'EXPIRED' ? /^expired .+ ago · vol / : /^resolved · vol /);
    }
    // A resolved market's book opens like any other.
    await page.locator('#market-list li[data-market]').first().click();
    const book = page.locator('#book-view');
    await waitFor('the resolved book to draw', async () => (await book.getAttribute('data-seq')) !== null, {
      timeoutMs: 15_000,
    });
    await page.selectOption('#market-status', 'ACTIVE');
    expect(pageErrors).toEqual([]);
  });

  it('draws the live book over Server-Sent Events with ?transport=sse', async () => {
    const market = harness.sim.market.marketIds()[4]!;
    await page.goto(`${harness.relay.url}/?transport=sse&market=${market}`);
    const book = await bookViewChanging();
    expect(await book.getAttribute('data-market')).toBe(market);
    expect(harness.relay.sse.connections.size).toBeGreaterThanOrEqual(1);
    expect(pageErrors).toEqual([]);
  });

  it('draws the live book over Server-Sent Events on the operator port too', async () => {
    // The page lives on the operator port here; its book view connects back to that origin.
    const operated = await startHarness({
      sim: { markets: 3, tickMs: 100 },
      relay: { bookPollMs: 100, pricePollMs: 100, operatorPort: 0, operatorHost: '127.0.0.1' },
    });
    try {
      const market = operated.sim.market.marketIds()[1]!;
      await page.goto(`${operated.relay.operatorUrl}/?transport=sse&market=${market}`);
      const book = await bookViewChanging();
      expect(await book.getAttribute('data-market')).toBe(market);
      expect(operated.relay.sse.connections.size).toBeGreaterThanOrEqual(1);
      expect(operated.relay.ws.connections.size).toBe(0);
      expect(pageErrors).toEqual([]);
      await page.goto('about:blank');
    } finally {
      await operated.stop();
    }
  });

  /** Clicks a channel tab and waits until its view drew a verified state with at least one row. */
  async function channelShows(channel: string) {
    await page.locator(`#channel-tabs button[data-channel="${channel}"]`).click();
    const view = page.locator('#book-view');
    await waitFor(
      `the ${channel} view to draw its stream`,
      async () =>
        (await view.getAttribute('data-channel')) === channel &&
        (await view.getAttribute('data-seq')) !== null &&
        Number(await view.locator('.channel-body').getAttribute('data-rows')) > 0,
      { timeoutMs: 15_000 },
    );
    return view;
  }

  for (const transport of ['websocket', 'sse'] as const) {
    it(`shows each channel of the picked market in its tab (${transport})`, async () => {
      const market = harness.sim.market.activeMarketIds()[0]!;
      const query = transport === 'sse' ? '&transport=sse' : '';
      await page.goto(`${harness.relay.url}/?market=${market}${query}`);
      await bookViewChanging();

      const trades = await channelShows('trades');
      expect(await trades.locator('table.trades tbody tr td').first().textContent()).toMatch(
        /^\d\d:\d\d:\d\d/,
      );

      const record = await channelShows('market');
      expect(await record.locator('table.record').textContent()).toContain(market);

      const probabilities = await channelShows('probabilities');
      expect(await probabilities.locator('.channel-summary').textContent()).toMatch(/markets\)$/);

      const oracle = await channelShows('oracle');
      const { oracle_feed_id } = await (await fetch(`${harness.sim.url}/api/markets/${market}`))
        .json()
        .then((body: { market: { oracle_feed_id: string } }) => body.market);
      expect(await oracle.locator('.channel-summary').textContent()).toBe(`oracle feed ${oracle_feed_id}`);

      const orders = await channelShows('orders');
      expect(await orders.locator('table.orders.bid tbody tr').count()).toBeGreaterThan(0);
      // The tab is in the URL, so a reload comes back to it.
      expect(new URL(page.url()).searchParams.get('channel')).toBe('orders');

      await page.locator('#channel-tabs button[data-channel="book"]').click();
      await bookViewChanging();
      expect(pageErrors).toEqual([]);
    });
  }
});
