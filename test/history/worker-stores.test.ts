/**
 * Where each worker of `--workers` records (src/workers/worker.ts): into a folder of its own inside
 * `--data-dir` with the embedded store (a DuckDB file has one writer), into the one shared store
 * with a PostgreSQL URL, as every relay of a cluster does.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCommandLine, type ServeConfig } from '../../src/config/config.ts';
import { ASSIGNMENT_ENV, workerConfig } from '../../src/workers/worker.ts';

function serve(argv: string[]): ServeConfig {
  const command = parseCommandLine(['serve', ...argv], {});
  if (command.command !== 'serve') throw new Error('not serve');
  return command.config;
}

const assigned = {
  [ASSIGNMENT_ENV]: JSON.stringify({
    index: 1,
    redis: 'redis://127.0.0.1:1',
    upstream: 'http://127.0.0.1:2',
  }),
};

describe('the history store of a worker', () => {
  it('is a folder of its own with the embedded store', () => {
    const { config } = workerConfig(serve(['--data-dir', '/data']), assigned);
    expect(config.history).toMatchObject({ store: 'embedded', dataDir: path.join('/data', 'worker-2') });
  });

  it("is the cluster's shared store with a PostgreSQL URL", () => {
    const url = 'postgres://relay@db:5432/market_relay';
    const { config } = workerConfig(serve(['--history', url]), assigned);
    expect(config.history).toEqual({
      store: 'postgres',
      url,
      retentionMs: 86_400_000,
      maxBytes: 1024 ** 3,
      flushMs: 4_000,
    });
  });
});
