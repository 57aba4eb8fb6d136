/**
 * The status page is honest in a real browser: a stale stream is unmistakable (its book greyed, a
 * banner with the reason and since when) and clears when it is live again, and the page fits a
 * 420 px screen with a 66-character oracle feed id on it, its subscribed-markets table too.
 */
import { describe, expect, it } from 'vitest';
import {
  bookViewChanging,
  browserTestsRun,
  useStatusPageBrowser,
} from '../../support/clients/status-page-browser.ts';
import { waitFor } from '../../support/wait-for.ts';

describe.runIf(browserTestsRun())('status page freshness and layout in a browser', () => {
  const fixture = useStatusPageBrowser();

  it('greys a stale book, with a banner saying why and since when, and lifts both when it is live again', async () => {
    const { harness, page, pageErrors } = fixture;
    const market = harness.sim.market.activeMarketIds()[2]!;
    await page.goto(`${harness.relay.url}/?market=${market}`);
    const book = await bookViewChanging(page);
    const banner = book.locator('.stream-banner');
    expect(await banner.isVisible()).toBe(false);
    expect(await book.locator('.book-meta').textContent()).not.toMatch(/\b1 updates\b/);

    harness.sim.setFaults({ errorRate: 1 });
    try {
      await waitFor('the stale banner', async () => (await book.getAttribute('data-status')) === 'stale', {
        timeoutMs: 10_000,
      });
      expect(await banner.isVisible()).toBe(true);
      expect(await banner.textContent()).toMatch(/^Stale since \d\d:\d\d:\d\d UTC: upstream error\./);
      const ladder = book.locator('table.ladder');
      expect(await ladder.evaluate((element) => getComputedStyle(element).filter)).toContain('grayscale');
      expect(Number(await ladder.evaluate((element) => getComputedStyle(element).opacity))).toBeLessThan(0.6);
    } finally {
      harness.sim.setFaults({ errorRate: 0 });
    }
    await waitFor('live again', async () => (await book.getAttribute('data-status')) === 'live', {
      timeoutMs: 10_000,
    });
    expect(await banner.isVisible()).toBe(false);
    expect(pageErrors).toEqual([]);
  });

  it('fits a 420 px wide screen, the 66-character oracle feed id and the subs and seq columns included', async () => {
    const { harness, browser } = fixture;
    const narrow = await browser.newPage({ viewport: { width: 420, height: 900 } });
    try {
      const market = harness.sim.market.activeMarketIds()[0]!;
      await narrow.goto(`${harness.relay.url}/?market=${market}&tab=oracle`);
      const view = narrow.locator('#live-view');
      await waitFor(
        'the oracle view',
        async () =>
          (await view.getAttribute('data-channel')) === 'oracle' &&
          (await view.getAttribute('data-seq')) !== null,
        { timeoutMs: 15_000 },
      );
      const pageWidth = await narrow.evaluate(() => document.documentElement.scrollWidth);
      expect(pageWidth).toBeLessThanOrEqual(420);
      // Nothing in the view runs over its box: the feed id wraps.
      const overflowing = await view.evaluate((root) =>
        Array.from(root.querySelectorAll('*'))
          .filter((element) => element.scrollWidth > element.clientWidth + 1 && element.clientWidth > 0)
          .map((element) => `${element.tagName}.${element.className}`),
      );
      expect(overflowing).toEqual([]);
      // The subscribed-markets table (the page's own streams) fits its panel: subs and seq in view.
      await narrow.waitForSelector('#streams-body tr[data-market]', { timeout: 10_000 });
      const table = await narrow.locator('#streams-table').evaluate((element) => {
        const panel = element.closest('.panel')!;
        const right = panel.getBoundingClientRect().right;
        const headers = Array.from(element.querySelectorAll('th'));
        return {
          scrolls: panel.scrollWidth > panel.clientWidth + 1,
          shown: headers
            .filter((th) => th.getBoundingClientRect().width > 0 && th.getBoundingClientRect().right <= right)
            .map((th) => th.textContent),
        };
      });
      expect(table).toEqual({ scrolls: false, shown: ['market', 'channel', 'state', 'subs', 'seq'] });
    } finally {
      await narrow.close();
    }
  });
});
