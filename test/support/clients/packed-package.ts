/**
 * @module test/support/clients/packed-package
 * A package of this repository as a user gets it, for the package tests: `npm pack` into a temp
 * folder, the tarball installed into an empty project beside it (dependencies from npm's cache,
 * where `npm ci` of this repository put every one of them), and a relay to run the package's
 * README snippet against. Everything is made before the file's tests and removed after them.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll } from 'vitest';
import { type Harness, startHarness } from '../harness.ts';

export const run = promisify(execFile);
export const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
export const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const MAX_BUFFER = 16 * 1024 * 1024;

export interface PackResult {
  filename: string;
  files: { path: string }[];
}

export interface PackedPackageOptions {
  /** Folder name prefix under the system's temp folder. */
  prefix: string;
  /** What to do before packing (build what the package carries), while the relay starts. */
  prepare?: () => Promise<void>;
  /** `npm pack` arguments besides `--json` and `--pack-destination`. */
  pack: string[];
  /** `npm install <tarball>` arguments besides the tarball. */
  install: string[];
}

export interface PackedPackage {
  readonly packed: PackResult;
  /** The empty project (`"type": "module"`) the tarball is installed into. */
  readonly consumer: string;
  /** What `npm install` printed, stdout then stderr. */
  readonly installOutput: string;
  /**
   * Runs `snippet` with Node in the consumer project, its relay URLs (`http://` and `ws://`
   * `127.0.0.1:8080`, the READMEs' address) pointed at the test's relay; returns what it printed
   * so far on each call. The process is killed after the file's tests.
   */
  runSnippet(snippet: string): () => string;
  /** The consumer's `export { connect } from '<specifier>'` bundled by esbuild for browsers. */
  browserBundle(specifier: string): Promise<string>;
}

/** The ```js block of a README that imports `specifier`. */
export function readmeSnippet(readme: string, specifier: string): string {
  const text = readFileSync(readme, 'utf8');
  const block = [...text.matchAll(/```js\n([\s\S]*?)\n```/g)].find((m) =>
    m[1]?.includes(`from '${specifier}'`),
  );
  if (block?.[1] === undefined) throw new Error(`${readme} has no \`\`\`js block importing ${specifier}`);
  return block[1];
}

/** npm may print a build's own output before the JSON array. */
function packResult(stdout: string): PackResult {
  const start = stdout.startsWith('[') ? 0 : stdout.indexOf('\n[') + 1;
  return (JSON.parse(stdout.slice(start)) as PackResult[])[0]!;
}

export function usePackedPackage(options: PackedPackageOptions): PackedPackage {
  const work = mkdtempSync(join(tmpdir(), options.prefix));
  const consumer = join(work, 'consumer');
  let packed: PackResult;
  let installOutput: string;
  let starting: Promise<Harness> | undefined;
  let harness: Harness;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    starting = startHarness({ sim: { markets: 4, tickMs: 50 } });
    await options.prepare?.();
    const { stdout } = await run(NPM, ['pack', ...options.pack, '--json', '--pack-destination', work], {
      cwd: ROOT,
      maxBuffer: MAX_BUFFER,
    });
    packed = packResult(stdout);
    mkdirSync(consumer);
    writeFileSync(
      join(consumer, 'package.json'),
      JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
    );
    const installed = await run(NPM, ['install', join(work, packed.filename), ...options.install], {
      cwd: consumer,
      maxBuffer: MAX_BUFFER,
    });
    installOutput = installed.stdout + installed.stderr;
    harness = await starting;
  }, 300_000);

  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await (await starting?.catch(() => undefined))?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  return {
    get packed() {
      return packed;
    },
    consumer,
    get installOutput() {
      return installOutput;
    },
    runSnippet(snippet) {
      const pointed = snippet
        .replaceAll('http://127.0.0.1:8080', harness.relay.url)
        .replaceAll('ws://127.0.0.1:8080', harness.relay.url.replace(/^http/, 'ws'));
      writeFileSync(join(consumer, 'book.mjs'), pointed);
      const child = spawn(process.execPath, ['book.mjs'], { cwd: consumer });
      children.push(child);
      let output = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        output += chunk;
      });
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        output += chunk;
      });
      return () => output;
    },
    async browserBundle(specifier) {
      const { build } = await import('esbuild');
      const result = await build({
        stdin: { contents: `export { connect } from '${specifier}';`, resolveDir: consumer },
        bundle: true,
        format: 'esm',
        platform: 'browser',
        write: false,
        logLevel: 'silent',
      });
      return result.outputFiles[0]?.text ?? '';
    },
  };
}
