/**
 * The status page in a real browser (Debian's chromium driven by playwright-core): on a relay over a
 * live simulator it fills the markets table from the SSE feed and the picker from upstream, opens a
 * market's book view (the client SDK bundled by the relay) and sees the book change in place, over
 * the WebSocket and over SSE, and takes a screenshot, under the page's Content-Security-Policy and an
 * `--allowed-origins` list that does not name the relay. `npm run screenshot` (UPDATE_SCREENSHOT=1)
 * saves it as the README's docs/status-page.png; a plain test run leaves the working tree alone and
 * saves it to a temp dir. The channel tabs and the freshness display have files of their own.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ProtocolClient } from '../../support/clients/protocol-client.ts';
import {
  bookViewChanging,
  browserTestsRun,
  useStatusPageBrowser,
} from '../../support/clients/status-page-browser.ts';
import { startHarness } from '../../support/harness.ts';
import { waitFor } from '../../support/wait-for.ts';

const SCREENSHOT = process.env.UPDATE_SCREENSHOT
  ? fileURLToPath(new URL('../../../docs/status-page.png', import.meta.url))
  : join(mkdtempSync(join(tmpdir(), 'market-relay-')), 'status-page.png');

describe.runIf(browserTestsRun())('status page in a browser', () => {
  const fixture = useStatusPageBrowser();
  let watcher: ProtocolClient | undefined;
  afterAll(async () => {
    await watcher?.close();
  });

  it('shows live markets and opens a live order book', async () => {
    const { harness, page, pageErrors } = fixture;
    // Another client already watches a few markets, as on a running relay.
    const markets = harness.sim.market.marketIds();
    // Without compression, so that the one compressing connection below is the browser's.
    watcher = await ProtocolClient.connect(harness.relay.url, { perMessageDeflate: false });
    await watcher.request({ op: 'subscribe', channel: 'book', markets: markets.slice(0, 3), depth: 10 });
    await watcher.request({ op: 'subscribe', channel: 'price', markets: markets.slice(0, 2) });

    await page.goto(harness.relay.url);
    await page.waitForSelector('#streams-body tr[data-market][data-state="live"]', { timeout: 10_000 });
    expect(await page.locator('#streams-body tr[data-market]').count()).toBe(5);
    // The watcher's address group holds the polled targets: the Streams card names its share.
    await waitFor('the budget shares to show', async () =>
      /share groups?: address 127\.0\.0\.1 \d+% \(\d+ targets\)/.test(
        (await page.textContent('#shares')) ?? '',
      ),
    );
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

    await bookViewChanging(page);
    // Chromium offered permessage-deflate: the page's book came as the relay's shared compressed
    // frames, and the SDK applied them (it checks seq and checksum of every update).
    expect([...harness.relay.ws.connections].map((connection) => connection.compresses)).toContain(true);
    expect(harness.relay.ws.connections.size).toBe(2);
    const bestBid = await page.locator('#live-view tr.bid td.price').first().textContent();
    expect(bestBid).toMatch(/^\d+\.\d+$/);
    expect(await page.locator('#live-view .price-cell.mid .value').textContent()).toMatch(/^\d+\.\d+$/);
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
    const { harness, page, pageErrors } = fixture;
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
    const book = page.locator('#live-view');
    await waitFor('the resolved book to draw', async () => (await book.getAttribute('data-seq')) !== null, {
      timeoutMs: 15_000,
    });
    await page.selectOption('#market-status', 'ACTIVE');
    expect(pageErrors).toEqual([]);
  });

  it('draws the live book over Server-Sent Events with ?transport=sse', async () => {
    const { harness, page, pageErrors } = fixture;
    const market = harness.sim.market.marketIds()[4]!;
    await page.goto(`${harness.relay.url}/?transport=sse&market=${market}`);
    const book = await bookViewChanging(page);
    expect(await book.getAttribute('data-market')).toBe(market);
    expect(harness.relay.sse.connections.size).toBeGreaterThanOrEqual(1);
    expect(pageErrors).toEqual([]);
  });

  it('draws the live book over Server-Sent Events on the operator port too', async () => {
    const { page, pageErrors } = fixture;
    // The page lives on the operator port here; its book view connects back to that origin.
    const operated = await startHarness({
      sim: { markets: 3, tickMs: 100 },
      relay: { bookPollMs: 100, pricePollMs: 100, operatorPort: 0, operatorHost: '127.0.0.1' },
    });
    try {
      const market = operated.sim.market.marketIds()[1]!;
      await page.goto(`${operated.relay.operatorUrl}/?transport=sse&market=${market}`);
      const book = await bookViewChanging(page);
      expect(await book.getAttribute('data-market')).toBe(market);
      expect(operated.relay.sse.connections.size).toBeGreaterThanOrEqual(1);
      expect(operated.relay.ws.connections.size).toBe(0);
      expect(pageErrors).toEqual([]);
      await page.goto('about:blank');
    } finally {
      await operated.stop();
    }
  });
});
