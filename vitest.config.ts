import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Most test files spend their time waiting on sockets, timers and child processes, so two run
    // side by side even on a 2-core machine (where vitest's default, one fewer than the cores, is one).
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
});
