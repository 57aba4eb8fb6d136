/**
 * The published package as a user gets it: dist/ built as `prepare` builds it, `npm pack`, the
 * tarball installed into an empty project, and from there `market-relay/client` imported in Node —
 * the README's SDK snippet run against a live relay — bundled for browsers, and the CLI started.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../support/harness.ts';
import { waitFor } from '../support/wait-for.ts';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

interface PackResult {
  filename: string;
  files: { path: string }[];
}

/** The README's SDK example, the one ```js block importing the SDK. */
function readmeSdkSnippet(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const block = [...readme.matchAll(/```js\n([\s\S]*?)\n```/g)].find((m) =>
    m[1]?.includes("from 'market-relay/client'"),
  );
  if (block?.[1] === undefined) throw new Error('README has no ```js block importing market-relay/client');
  return block[1];
}

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
    builtAt = statSync(join(ROOT, 'dist', 'cli.js')).mtimeMs;
  } catch {
    return false;
  }
  const inputs = ['src', 'scripts', 'package.json', 'tsconfig.json', 'tsconfig.build.json'];
  return inputs.every((input) => newestMtime(join(ROOT, input)) < builtAt);
}

describe('the packed package', () => {
  const work = mkdtempSync(join(tmpdir(), 'market-relay-pack-'));
  const consumer = join(work, 'consumer');
  let packed: PackResult;
  let starting: Promise<Harness> | undefined;
  let harness: Harness;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    starting = startHarness({ sim: { markets: 4, tickMs: 50 } });
    // The root build `prepare` runs; not its second step, which builds the client workspace for
    // test/e2e/client-package.test.ts (that file packs it) and is no part of this package.
    if (!distIsCurrent()) await run(NPM, ['run', 'build'], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
    const { stdout } = await run(NPM, ['pack', '--ignore-scripts', '--json', '--pack-destination', work], {
      cwd: ROOT,
      maxBuffer: 16 * 1024 * 1024,
    });
    packed = (JSON.parse(stdout) as PackResult[])[0]!;
    mkdirSync(consumer);
    writeFileSync(
      join(consumer, 'package.json'),
      JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
    );
    // Dependencies from npm's cache, where `npm ci` of this repository put every one of them.
    await run(
      NPM,
      [
        'install',
        join(work, packed.filename),
        '--no-package-lock',
        '--omit=dev',
        '--offline',
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
      ],
      { cwd: consumer, maxBuffer: 16 * 1024 * 1024 },
    );
    harness = await starting;
  }, 300_000);

  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await (await starting?.catch(() => undefined))?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it('carries what it exports and runs, and nothing else', () => {
    const paths = packed.files.map((file) => file.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        'package.json',
        'README.md',
        'LICENSE',
        'bin/market-relay.js',
        'dist/cli.js',
        'dist/client/index.js',
        'dist/client/index.d.ts',
        'dist/client/node.js',
        'dist/http/status-page/index.html',
      ]),
    );
    const unwanted = paths.filter((path) => /^(src|test|bench|docs|\.ci)\/|\.map$|tsbuildinfo/.test(path));
    expect(unwanted).toEqual([]);
  });

  it("runs the README's SDK snippet from the installed package in Node", async () => {
    const snippet = readmeSdkSnippet()
      .replaceAll('http://127.0.0.1:8080', harness.relay.url)
      .replaceAll('ws://127.0.0.1:8080', harness.relay.url.replace(/^http/, 'ws'));
    writeFileSync(join(consumer, 'book.mjs'), snippet);
    const child = spawn(process.execPath, ['book.mjs'], { cwd: consumer });
    children.push(child);
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
    });
    await waitFor('a book update printed by the snippet', () => output.includes('best bid'), {
      timeoutMs: 20_000,
    });
    expect(output).not.toMatch(/Error/);
  });

  it('bundles for browsers without Node modules', async () => {
    const { build } = await import('esbuild');
    const result = await build({
      stdin: { contents: "export { connect } from 'market-relay/client';", resolveDir: consumer },
      bundle: true,
      format: 'esm',
      platform: 'browser',
      write: false,
      logLevel: 'silent',
    });
    const code = result.outputFiles[0]?.text ?? '';
    expect(code).toContain('globalThis');
    expect(code).not.toMatch(/from ["'](ws|node:[a-z]+)["']/);
  });

  it('installs the market-relay command', async () => {
    const { stdout } = await run(join(consumer, 'node_modules', '.bin', 'market-relay'), ['--version']);
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(stdout.trim()).toBe(version);
  });
});
