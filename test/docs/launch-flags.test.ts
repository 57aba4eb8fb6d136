/**
 * The relay is launched with the same node flags wherever the project launches it (package.json
 * `start`, the Dockerfile) and wherever the benchmarks measure it as shipped (docs/operations.md
 * "Heap"), and this Node accepts them: a flag a Node version dropped would stop `npm start`.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SHIPPED_RELAY_NODE_FLAGS } from '../../bench/lib/servers.ts';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

describe('the relay’s launch flags', () => {
  it('are the same in package.json `start`, the Dockerfile and the benchmarks', () => {
    const start = (JSON.parse(read('package.json')) as { scripts: { start: string } }).scripts.start;
    expect(start).toBe(`node ${SHIPPED_RELAY_NODE_FLAGS.join(' ')} bin/market-relay.js serve`);
    const entrypoint = /^ENTRYPOINT (.*)$/m.exec(read('Dockerfile'))?.[1];
    expect(JSON.parse(entrypoint ?? 'null')).toEqual([
      'node',
      ...SHIPPED_RELAY_NODE_FLAGS,
      'dist/src/cli.js',
    ]);
  });

  it('are accepted by this Node (one it rejects exits with "bad option" before the relay starts)', () => {
    const output = execFileSync(
      process.execPath,
      [...SHIPPED_RELAY_NODE_FLAGS, '-e', 'process.stdout.write("started")'],
      {
        encoding: 'utf8',
      },
    );
    expect(output).toBe('started');
  });
});
