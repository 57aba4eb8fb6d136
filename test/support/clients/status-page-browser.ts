/**
 * @module test/support/clients/status-page-browser
 * What the status page's browser tests share: Debian's chromium driven by playwright-core (skipped
 * outside CI with a line saying what to install, required under CI), a relay over a live simulator,
 * one page that records page errors and console errors, and the wait for a book view that changes.
 */
import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { type Harness, startHarness } from '../harness.ts';
import { waitFor } from '../wait-for.ts';

const CHROMIUM = '/usr/bin/chromium';

/** Whether the browser tests run here: chromium is installed, or this is CI (where it must be). */
export function browserTestsRun(): boolean {
  const run = existsSync(CHROMIUM) || process.env.CI !== undefined;
  if (!run)
    process.stdout.write('status page browser test skipped: install chromium (apt-get install chromium)\n');
  return run;
}

export interface BrowserFixture {
  readonly harness: Harness;
  readonly browser: Browser;
  readonly page: Page;
  /** Page errors and console errors so far (a CSP violation is one). */
  readonly pageErrors: string[];
}

/**
 * Starts the relay and the browser before the file's tests and stops them after; call once inside
 * the `describe`. The relay's allow-list does not name the relay: its own page must still connect.
 */
export function useStatusPageBrowser(): BrowserFixture {
  const fixture = { pageErrors: [] as string[] } as {
    -readonly [K in keyof BrowserFixture]: BrowserFixture[K];
  };
  beforeAll(async () => {
    fixture.harness = await startHarness({
      sim: { markets: 20, tickMs: 100 },
      // Compression on, so that Chromium's book view runs over permessage-deflate.
      relay: { bookPollMs: 100, pricePollMs: 100, allowedOrigins: ['https://ui.example'], compression: true },
    });
    fixture.browser = await chromium.launch({
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
    fixture.page = await fixture.browser.newPage({ viewport: { width: 1440, height: 900 } });
    fixture.page.on('pageerror', (error) => fixture.pageErrors.push(error.message));
    fixture.page.on('console', (message) => {
      if (message.type() === 'error') fixture.pageErrors.push(message.text());
    });
  });
  afterAll(async () => {
    await fixture.browser?.close();
    await fixture.harness?.stop();
  });
  return fixture;
}

/** Waits for the book view to draw a snapshot, then to apply updates in place (the SDK checks each). */
export async function bookViewChanging(page: Page) {
  const book = page.locator('#live-view');
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
