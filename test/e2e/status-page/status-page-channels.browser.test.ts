/**
 * The status page's channel tabs in a real browser: for the picked market, each other channel
 * (trades, the market record, probabilities, its oracle feed, orders, candles) draws its verified stream, over
 * the WebSocket and over SSE, and the tab is kept in the URL.
 */
import { describe, expect, it } from 'vitest';
import {
  bookViewChanging,
  browserTestsRun,
  useStatusPageBrowser,
} from '../../support/clients/status-page-browser.ts';
import { waitFor } from '../../support/wait-for.ts';

describe.runIf(browserTestsRun())('status page channel tabs in a browser', () => {
  const fixture = useStatusPageBrowser();

  /** Clicks a channel tab and waits until its view drew a verified state with at least one row. */
  async function channelShows(channel: string) {
    const { page } = fixture;
    await page.locator(`#view-tabs button[data-tab="${channel}"]`).click();
    const view = page.locator('#live-view');
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
      const { harness, page, pageErrors } = fixture;
      const market = harness.sim.market.activeMarketIds()[0]!;
      const query = transport === 'sse' ? '&transport=sse' : '';
      await page.goto(`${harness.relay.url}/?market=${market}${query}`);
      await bookViewChanging(page);

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
      const candles = await channelShows('candles');
      expect(await candles.locator('table.candles tbody tr td').last().textContent()).toMatch(
        /^(final|open)$/,
      );
      // The tab is in the URL, so a reload comes back to it.
      expect(new URL(page.url()).searchParams.get('tab')).toBe('candles');

      await page.locator('#view-tabs button[data-tab="book"]').click();
      await bookViewChanging(page);
      expect(pageErrors).toEqual([]);
    });
  }
});
