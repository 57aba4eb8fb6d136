import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // No relay a test starts records into the repository: `serve` records by default, and every
    // relay the tests spawn inherits this (a test of recording gives its own temporary --data-dir).
    // A relay that records writes every second rather than every 4 s, so that what a test waits for
    // (a SIGKILL's loss, another relay's record) comes within seconds.
    env: { HISTORY: 'off', HISTORY_FLUSH_MS: '1000' },
    // A fork runs file after file with its imported modules kept, instead of a fresh fork that
    // imports fastify, zod, ioredis and the relay again for each of ~230 files (measured: that
    // import was half the suite's CPU time). Test files close what they start and restore fake
    // timers and process listeners, so nothing of one file reaches the next; module state (such as
    // the per-process stream-number counter) does carry over, and no test assumes where it starts.
    isolate: false,
    // Most test files spend their time waiting on sockets, timers and child processes, so two run
    // side by side even on a 2-core machine (where vitest's default, one fewer than the cores, is one).
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
});
