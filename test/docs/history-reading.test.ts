/**
 * docs/history.md "Reading it" runs as written: its pandas snippet (Debian's `python3-pandas`,
 * run by /usr/bin/python3) reads the NDJSON export of a recording relay, and its DuckDB snippet's
 * `curl` command downloads the Parquet export and its SQL, run by DuckDB, reads it; each code block
 * is taken from the page with only the relay's address, the market and the time replaced. What each
 * prints is what the live client of the book received. Outside CI a missing python3-pandas or curl
 * skips its half, with a line saying what to install.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, describe, expect, it } from 'vitest';
import type { Message } from '../support/clients/message-recorder.ts';
import { ProtocolClient } from '../support/clients/protocol-client.ts';
import { type Harness, useHarness } from '../support/harness.ts';
import { waitFor } from '../support/wait-for.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);
const PYTHON = '/usr/bin/python3';

/** The "Reading it" section's code blocks whose info string is exactly `lang`. */
function snippets(lang: string): string[] {
  const page = readFileSync(join(ROOT, 'docs', 'history.md'), 'utf8');
  const section = page.slice(
    page.indexOf('### Reading it'),
    page.indexOf('\n## ', page.indexOf('### Reading it')),
  );
  return [...section.matchAll(/```([^\n]*)\n([\s\S]*?)\n```/g)]
    .filter((match) => match[1] === lang)
    .map((match) => match[2]!);
}

/**
 * Whether a snippet's tools are here; in CI they are part of the job's set-up (.ci/run), so a
 * missing one fails there rather than skips.
 */
function runnable(snippet: string, found: boolean, install: string): boolean {
  if (found || process.env.CI !== undefined) return true;
  process.stdout.write(`history.md ${snippet} snippet skipped: install ${install}\n`);
  return false;
}
const pandasFound = await run(PYTHON, ['-c', 'import pandas']).then(
  () => true,
  () => false,
);
const runPandas = runnable('pandas', pandasFound, 'python3-pandas (apt-get install python3-pandas)');
const curlFound = (process.env.PATH ?? '')
  .split(delimiter)
  .some((folder) => existsSync(join(folder, 'curl')));
const runDuckDb = runnable('DuckDB', curlFound, 'curl (apt-get install curl)');

const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

describe('docs/history.md "Reading it"', () => {
  const { opened, start } = useHarness();

  /** A recording relay whose book of `market` changed a few times then stood still: what the live client received. */
  async function recordedBook(): Promise<{ harness: Harness; market: string; book: Message[] }> {
    const dataDir = mkdtempSync(join(tmpdir(), 'history-reading-'));
    folders.push(dataDir);
    const harness = await start({
      sim: { markets: 3, seed: 5, tickMs: 10 },
      relay: { history: { store: 'embedded', dataDir, retentionMs: 3_600_000, maxBytes: 1024 ** 3 } },
    });
    const [market] = harness.sim.market.activeMarketIds() as [string];
    const live = await ProtocolClient.connect(harness.relay.url);
    opened.push(live);
    await live.request({ op: 'subscribe', channel: 'book', markets: [market] });
    await waitFor('a changing book', () => live.of('update').length >= 10);
    harness.sim.setTickMs(0);
    // Polls of the book that began after the last change answered before the last of them began.
    const polls = () =>
      harness.sim.requests.filter(
        (request) => request.path === '/clob/orderbook' && request.query.market_id === market,
      ).length;
    const stoppedAt = polls();
    await waitFor('the relay polling the book as it stands', () => polls() >= stoppedAt + 3);
    const book = () =>
      live.messages.filter((message) => message.type === 'snapshot' || message.type === 'update');
    // The book stands still: the record holds every message the live client received.
    await waitFor('the record up to the live book', async () => {
      const url = `${harness.relay.url}/v1/history/book?market=${market}&from=${book()[0]!.rts as string}`;
      const lines = (await (await fetch(url)).text()).trim().split('\n');
      return lines.length === book().length && lines.at(-1) === JSON.stringify(book().at(-1));
    });
    return { harness, market, book: book() };
  }

  /** A snippet with the doc's relay address, market and time made the recording relay's. */
  function filledIn(snippet: string, harness: Harness, market: string, from: string): string {
    expect(snippet).toContain('http://127.0.0.1:8080/');
    expect(snippet).toContain('MARKET_ID');
    expect(snippet).toContain('2026-12-01T10:00:00Z');
    return snippet
      .replace('http://127.0.0.1:8080', harness.relay.url)
      .replace('MARKET_ID', market)
      .replace('2026-12-01T10:00:00Z', from);
  }

  it.runIf(runPandas)('the pandas snippet prints the last messages the live client received', async () => {
    const { harness, market, book } = await recordedBook();
    const [snippet] = snippets('python');
    const script = filledIn(snippet!, harness, market, book[0]!.rts as string);
    const { stdout } = await run(PYTHON, ['-c', script], { timeout: 20_000 });
    const [header, ...rows] = stdout.trim().split('\n');
    expect(header!.trim().split(/\s+/)).toEqual(['seq', 'epoch', 'type', 'ts', 'checksum']);
    // Each row: the frame's index, then the columns; `ts` as printed may hold a space.
    const printed = rows.map((row) => {
      const cells = row.trim().split(/\s+/);
      return {
        index: Number(cells[0]),
        seq: Number(cells[1]),
        epoch: cells[2],
        type: cells[3],
        checksum: Number(cells.at(-1)),
      };
    });
    expect(printed).toEqual(
      book.slice(-5).map((message, i) => ({
        index: book.length - 5 + i,
        seq: message.seq,
        epoch: message.epoch,
        type: message.type,
        checksum: message.checksum,
      })),
    );
  });

  it.runIf(runDuckDb)(
    "the DuckDB snippet's download and query read every message the live client received",
    async () => {
      const { harness, market, book } = await recordedBook();
      const folder = mkdtempSync(join(tmpdir(), 'history-reading-duckdb-'));
      folders.push(folder);
      const [download] = snippets('sh');
      await run('sh', ['-ec', filledIn(download!, harness, market, book[0]!.rts as string)], { cwd: folder });
      const [query] = snippets('sql');
      const instance = await DuckDBInstance.create(':memory:', { threads: '1' });
      const connection = await instance.connect();
      try {
        // The query names the file as the doc's reader has it: in the folder it was downloaded to.
        await connection.run(`SET file_search_path = '${folder}'`);
        const rows = (await connection.runAndReadAll(query!)).getRowObjectsJson();
        // The JSON form of DuckDB's rows: BIGINTs as decimal text, timestamps as DuckDB prints them.
        const read = rows.map(({ seq, rts, type, bid_levels }) => ({
          seq,
          rts: Date.parse(`${String(rts).replace(' ', 'T')}Z`),
          type,
          bid_levels,
        }));
        expect(read).toEqual(
          book.map((message) => {
            const bids = (message.data as { bids?: unknown[] }).bids;
            return {
              seq: String(message.seq),
              rts: Date.parse(message.rts as string),
              type: message.type,
              bid_levels: bids === undefined ? null : String(bids.length),
            };
          }),
        );
      } finally {
        connection.closeSync();
        instance.closeSync();
      }
    },
  );
});
