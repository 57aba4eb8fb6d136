/**
 * The published package as a user gets it: dist/ built as `prepare` builds it, `npm pack`, the
 * tarball installed into an empty project, and from there `market-relay/client` imported in Node —
 * the README's SDK snippet run against a live relay — bundled for browsers, and the CLI started.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NPM, ROOT, readmeSnippet, run, usePackedPackage } from '../../support/clients/packed-package.ts';
import { waitFor } from '../../support/wait-for.ts';

/** The newest change time of what the build reads: a file, or every file below a folder. */
function newestMtime(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(0, ...readdirSync(path).map((name) => newestMtime(join(path, name))));
}

/**
 * Whether dist/ is what `npm run build` would make now: built after every input changed. A fresh
 * `npm ci` (as in CI) has just built it, and building again costs most of this file's time.
 */
function distIsCurrent(): boolean {
  let builtAt: number;
  try {
    builtAt = statSync(join(ROOT, 'dist', 'src', 'cli.js')).mtimeMs;
  } catch {
    return false;
  }
  const inputs = [
    'src',
    'packages/protocol/src',
    'packages/client/src',
    'scripts',
    'package.json',
    'tsconfig.json',
    'tsconfig.build.json',
  ];
  return inputs.every((input) => newestMtime(join(ROOT, input)) < builtAt);
}

describe('the packed package', () => {
  const pack = usePackedPackage({
    prefix: 'market-relay-pack-',
    // The root build `prepare` runs; not its second step, which builds the client workspace for
    // test/e2e/packages/client-package.test.ts (that file packs it) and is no part of this package.
    prepare: async () => {
      if (!distIsCurrent()) await run(NPM, ['run', 'build'], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
    },
    pack: ['--ignore-scripts'],
    install: ['--no-package-lock', '--omit=dev', '--prefer-offline', '--no-audit', '--no-fund'],
  });

  it('carries what it exports and runs, and nothing else', () => {
    const paths = pack.packed.files.map((file) => file.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        'package.json',
        'README.md',
        'LICENSE',
        'bin/market-relay.js',
        'dist/src/cli.js',
        'dist/packages/client/src/index.js',
        'dist/packages/client/src/index.d.ts',
        'dist/packages/client/src/node.js',
        'dist/src/status-page/index.html',
      ]),
    );
    const unwanted = paths.filter((path) =>
      /^(src|packages|test|bench|docs|\.ci)\/|\.map$|tsbuildinfo/.test(path),
    );
    expect(unwanted).toEqual([]);
  });

  it("runs the README's SDK snippet from the installed package in Node", async () => {
    const output = pack.runSnippet(readmeSnippet(join(ROOT, 'README.md'), 'market-relay/client'));
    await waitFor('a book update printed by the snippet', () => output().includes('best bid'), {
      timeoutMs: 20_000,
    });
    expect(output()).not.toMatch(/Error/);
  });

  it('bundles for browsers without Node modules', async () => {
    const code = await pack.browserBundle('market-relay/client');
    expect(code).toContain('globalThis');
    expect(code).not.toMatch(/from ["'](ws|node:[a-z]+)["']/);
  });

  it('installs the market-relay command', async () => {
    const { stdout } = await run(join(pack.consumer, 'node_modules', '.bin', 'market-relay'), ['--version']);
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(stdout.trim()).toBe(version);
  });
});
