/**
 * The status page's page tabs in a real browser: the catalogue tab draws upstream's catalogue from
 * the `markets` channel and shows a market the simulator adds, and one it expires, as they happen,
 * filters by status and opens a picked market in the market tabs; the users tab draws a user's
 * stats, positions and activity from `rest` streams exactly as upstream serves them, follows their
 * patches, switches users from the leaderboard or the name field, and says so when a user is
 * unknown.
 */
import { describe, expect, it } from 'vitest';
import {
  bookViewChanging,
  browserTestsRun,
  useStatusPageBrowser,
} from '../../support/clients/status-page-browser.ts';
import { waitFor } from '../../support/wait-for.ts';

interface Position {
  market_id: string;
  market_title: string;
  outcome: string;
  quantity: string;
  avg_price: string;
  current_value: string;
}

describe.runIf(browserTestsRun())('status page catalogue and users tabs in a browser', () => {
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

  it("shows a user's stats, positions and activity live, as upstream serves them", async () => {
    const { harness, page, pageErrors } = fixture;
    const { leaderboard } = (await simCall('/api/rewards/leaderboard', 'GET')) as {
      leaderboard: { username: string }[];
    };
    const [first, second] = leaderboard.map((entry) => entry.username);
    await page.goto(`${harness.relay.url}/?tab=users`);
    const view = page.locator('#live-view');
    const section = (name: string) => view.locator(`section[data-section="${name}"]`);
    const drawn = async (name: string, user: string) =>
      (await section(name).getAttribute('data-path')) === `/api/users/${user}/${name}` &&
      Number(await section(name).getAttribute('data-rows')) > 0;

    // No user named: the leaderboard's first.
    await waitFor(
      'the first user drawn',
      async () => (await drawn('positions', first!)) && drawn('stats', first!),
      {
        timeoutMs: 15_000,
      },
    );
    expect(await view.getAttribute('data-user')).toBe(first);
    expect(await section('leaderboard').locator('tbody tr').count()).toBe(Math.min(leaderboard.length, 15));
    expect(await drawn('activity', first!)).toBe(true);

    // Positions follow the live midpoint: patches arrive and are drawn, each field as served.
    await waitFor(
      'a position patch',
      async () => Number(await section('positions').getAttribute('data-updates')) > 0,
      {
        timeoutMs: 15_000,
      },
    );
    // With the books frozen, the values stand still: what is drawn is exactly what upstream serves.
    harness.sim.market.setBookChanging(false);
    try {
      const { positions } = (await simCall(`/api/users/${first}/positions`, 'GET')) as {
        positions: Position[];
      };
      const served = positions
        .slice(0, 15)
        .map((position) => [
          position.market_title,
          position.outcome,
          position.quantity,
          position.avg_price,
          position.current_value,
        ]);
      await waitFor('the drawn positions to be the served ones', async () => {
        const drawnRows = await section('positions')
          .locator('tbody tr')
          .evaluateAll((rows) => rows.map((row) => Array.from(row.children).map((cell) => cell.textContent)));
        return JSON.stringify(drawnRows) === JSON.stringify(served);
      });
    } finally {
      harness.sim.market.setBookChanging(true);
    }

    // Another user from the leaderboard, then one typed in, then one upstream does not know.
    await section('leaderboard').locator(`tbody tr[data-key="${second}"]`).click();
    await waitFor('the second user drawn', () => drawn('positions', second!), { timeoutMs: 15_000 });
    expect(new URL(page.url()).searchParams.get('user')).toBe(second);
    await view.locator('input[name="user"]').fill(first!);
    await view.locator('input[name="user"]').press('Enter');
    await waitFor('the first user again', () => drawn('positions', first!), { timeoutMs: 15_000 });
    await view.locator('input[name="user"]').fill('nobody_at_all');
    await view.locator('input[name="user"]').press('Enter');
    await waitFor(
      'the unknown user said so',
      async () => (await section('positions').getAttribute('data-status')) === 'closed',
      { timeoutMs: 15_000 },
    );
    expect(await section('positions').locator('.stream-banner').textContent()).toMatch(
      /^Closed since .* does not exist upstream\./,
    );

    // A position opens its market in the market tabs.
    await view.locator('input[name="user"]').fill(first!);
    await view.locator('input[name="user"]').press('Enter');
    await waitFor('the first user again', () => drawn('positions', first!), { timeoutMs: 15_000 });
    const { positions } = (await simCall(`/api/users/${first}/positions`, 'GET')) as {
      positions: Position[];
    };
    await section('positions').locator('tbody tr').first().click();
    const book = await bookViewChanging(page);
    expect(await book.getAttribute('data-market')).toBe(positions[0]!.market_id);
    expect(pageErrors).toEqual([]);
  });
});
