/**
 * The status page's page tabs in a real browser: the catalogue tab draws upstream's catalogue from
 * the `markets` channel and shows a market the simulator adds, and one it expires, as they happen,
 * filters by status and opens a picked market in the market tabs.
 */
import { describe, expect, it } from 'vitest';
import { bookViewChanging, browserTestsRun, useStatusPageBrowser } from '../support/status-page-browser.ts';
import { waitFor } from '../support/wait-for.ts';

describe.runIf(browserTestsRun())('status page catalogue tab in a browser', () => {
  const fixture = useStatusPageBrowser();

  async function simCall(path: string, method: string, body?: unknown) {
    const response = await fetch(`${fixture.harness.sim.url}${path}`, {
      method,
      ...(body === undefined
        ? {}
        : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
    expect(response.ok).toBe(true);
    return response.json();
  }

  it('lists the catalogue live: a new market and an expiry appear as they happen, and a pick opens the book', async () => {
    const { harness, page, pageErrors } = fixture;
    await page.goto(harness.relay.url);
    await page.locator('#view-tabs button[data-tab="catalogue"]').click();
    const view = page.locator('#live-view');
    const rows = view.locator('table.catalogue-table tbody tr');
    await waitFor(
      'the catalogue',
      async () => (await rows.count()) === harness.sim.market.marketIds().length,
      {
        timeoutMs: 15_000,
      },
    );
    expect(await view.getAttribute('data-tab')).toBe('catalogue');
    expect(new URL(page.url()).searchParams.get('tab')).toBe('catalogue');

    const added = (await simCall('/_sim/markets', 'POST')) as { id: string };
    const newRow = view.locator(`table.catalogue-table tr[data-key="${added.id}"]`);
    await waitFor('the added market in the catalogue', async () => (await newRow.count()) === 1, {
      timeoutMs: 15_000,
    });
    // Listed while the view is open: first, marked, and in the log.
    expect(await rows.first().getAttribute('data-key')).toBe(added.id);
    expect(await newRow.getAttribute('data-fresh')).toBe('true');
    expect(await newRow.getAttribute('data-status')).toBe('ACTIVE');
    const { market } = (await simCall(`/api/markets/${added.id}`, 'GET')) as { market: { title: string } };
    expect(await newRow.locator('td').first().textContent()).toBe(market.title);
    expect(await view.locator(`.change-log li[data-kind="listed"][data-key="${added.id}"]`).count()).toBe(1);

    const expiring = harness.sim.market.activeMarketIds().find((id) => id !== added.id)!;
    await simCall(`/_sim/markets/${expiring}`, 'PUT', { status: 'EXPIRED' });
    const expiredRow = view.locator(`table.catalogue-table tr[data-key="${expiring}"]`);
    await waitFor(
      'the expiry in the catalogue',
      async () => (await expiredRow.getAttribute('data-status')) === 'EXPIRED',
      {
        timeoutMs: 15_000,
      },
    );
    expect(await view.locator(`.change-log li[data-kind="expired"][data-key="${expiring}"]`).count()).toBe(1);

    // The status filter narrows the list to that status.
    await view.locator('select.catalogue-status').selectOption('expired');
    const statuses = await rows.evaluateAll((elements) =>
      elements.map((row) => row.getAttribute('data-status')),
    );
    expect(statuses.length).toBeGreaterThan(0);
    expect(new Set(statuses)).toEqual(new Set(['EXPIRED']));
    expect(await expiredRow.count()).toBe(1);
    await view.locator('select.catalogue-status').selectOption('active');
    expect(await expiredRow.count()).toBe(0);

    // A picked market opens in the market tabs (the book first).
    await newRow.click();
    const book = await bookViewChanging(page);
    expect(await book.getAttribute('data-market')).toBe(added.id);
    expect(await book.getAttribute('data-tab')).toBe('book');
    expect(new URL(page.url()).searchParams.get('market')).toBe(added.id);
    expect(pageErrors).toEqual([]);
  });
});
