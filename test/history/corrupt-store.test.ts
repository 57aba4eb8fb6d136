/**
 * A store file that is not a store (corrupt, or another program's) stops `serve` at start with one
 * clear line naming the file and what to do, never later while serving; a missing one is created.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { HISTORY_FILE, HistoryStoreOpenError, openDuckDbStore } from '../../src/history/duckdb-store.ts';

const BIN = new URL('../../bin/market-relay.js', import.meta.url).pathname;
const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

function corruptFolder(): string {
  const folder = mkdtempSync(path.join(tmpdir(), 'history-corrupt-'));
  folders.push(folder);
  writeFileSync(path.join(folder, HISTORY_FILE), Buffer.from('this is not a database file'.repeat(200)));
  return folder;
}

describe('a corrupt history store', () => {
  it('is a clear error when opened', async () => {
    const folder = corruptFolder();
    const opening = openDuckDbStore(folder);
    await expect(opening).rejects.toBeInstanceOf(HistoryStoreOpenError);
    await expect(opening).rejects.toThrow(
      /history store .*history\.duckdb cannot be opened .*move it away or delete it/,
    );
  });

  it('stops `serve` at start with that one line', async () => {
    const folder = corruptFolder();
    const run = promisify(execFile)(process.execPath, [
      BIN,
      'serve',
      '--port=0',
      '--history=embedded',
      `--data-dir=${folder}`,
      '--markets=2',
      '--log-level=silent',
    ]);
    const failure = await run.then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stderr).toMatch(/^market-relay: history store .*cannot be opened/m);
    expect(failure?.stderr).not.toMatch(/listening on/);
  });

  it('is created when missing', async () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'history-new-'));
    folders.push(folder);
    const store = await openDuckDbStore(path.join(folder, 'nested', 'data'));
    await store.close();
    expect(existsSync(path.join(folder, 'nested', 'data', HISTORY_FILE))).toBe(true);
  });
});
