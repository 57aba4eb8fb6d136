/**
 * docs/operations.md lists every command-line option of `serve` and `sim` with its environment
 * twin and its default, as src/config/config.ts and src/config/tuning.ts define them.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { commands } from '../../src/config/config.ts';

const doc = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');

/** Table rows by flag: `| `--port` | `PORT` | 8080 (sim: 9090) | ... |` -> [env, default]. */
const rows = new Map(
  doc
    .split('\n')
    .map((line) => /^\| `--([a-z0-9-]+)` \| `([A-Z0-9_]+)` \| ([^|]+) \|/.exec(line))
    .filter((match) => match !== null)
    .map((match) => [match[1]!, { env: match[2]!, fallback: match[3]!.trim() }]),
);

describe('docs/operations.md documents every option', () => {
  for (const [command, options] of Object.entries(commands)) {
    it(`lists each option of ${command} with its environment twin and default`, () => {
      for (const [name, spec] of Object.entries(options)) {
        const row = rows.get(name);
        expect(row, `--${name}`).toBeDefined();
        expect(row!.env, `--${name}`).toBe(spec.env);
        const fallback = spec.default ?? 'unset';
        const documented =
          command === 'sim' && name === 'port'
            ? row!.fallback.replace(/^.*sim: (\d+).*$/, '$1')
            : row!.fallback;
        expect(documented.replaceAll('`', '').split(' ')[0], `--${name}`).toBe(fallback);
      }
    });
  }
});
