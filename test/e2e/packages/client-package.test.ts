/**
 * The client-only package as a user gets it: `npm pack` of the `@market-relay/client` workspace
 * (packages/client, built by `prepack`), the tarball installed into an empty project, which must
 * print no warning on this Node, pull in no server dependency and take under 1 MB on disk, as `du`
 * counts it (whole blocks per file, so many small files cost more than their bytes); from there the
 * package README's snippet keeps a live book from a relay, a browser bundle carries no Node
 * module, and its type declarations check in a project with no Node types.
 */
import { lstatSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NPM, ROOT, readmeSnippet, run, usePackedPackage } from '../../support/clients/packed-package.ts';
import { waitFor } from '../../support/wait-for.ts';

const PACKAGE = join(ROOT, 'packages', 'client');
/** The packages' README promise: "under 1 MB installed", dependencies included. */
const MAX_INSTALLED_KB = 1024;

interface Manifest {
  name: string;
  dependencies?: Record<string, string>;
}
interface LsNode {
  version?: string;
  dependencies?: Record<string, LsNode>;
}

function manifest(folder: string): Manifest {
  return JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')) as Manifest;
}

/** Every installed package's name in `npm ls --all --json`; unmet optional ones have no version. */
function installedNames(tree: LsNode): string[] {
  return Object.entries(tree.dependencies ?? {}).flatMap(([name, node]) =>
    node.version === undefined ? [] : [name, ...installedNames(node)],
  );
}

/** What `du -sk` prints for a folder: the KB of the blocks it and everything below it hold. */
function diskKbUnder(folder: string): number {
  const blocks = (path: string): number => {
    const stat = lstatSync(path);
    const below = stat.isDirectory()
      ? readdirSync(path).reduce((sum, name) => sum + blocks(join(path, name)), 0)
      : 0;
    return below + stat.blocks;
  };
  // `blocks` counts 512-byte units whatever the file system's block size.
  return Math.ceil(blocks(folder) / 2);
}

describe('the packed client package', () => {
  const pack = usePackedPackage({
    prefix: 'market-relay-client-pack-',
    pack: ['--workspace', '@market-relay/client'],
    install: ['--prefer-offline', '--no-audit', '--no-fund'],
  });
  const { consumer } = pack;

  it('carries the SDK, its types and README, and nothing else', () => {
    const paths = pack.packed.files.map((file) => file.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        'package.json',
        'README.md',
        'LICENSE',
        'dist/client/src/index.js',
        'dist/client/src/index.d.ts',
        'dist/client/src/node.js',
        'dist/protocol/src/protocol/book.d.ts',
        'dist/eventsource-parser.LICENSE',
      ]),
    );
    // The code is bundled: one file per entry and the chunk they share, no file per source file.
    expect(paths.filter((path) => path.endsWith('.js')).sort()).toEqual([
      'dist/client/src/index.js',
      'dist/client/src/node.js',
      expect.stringMatching(/^dist\/client\/src\/shared-[A-Z0-9]+\.js$/),
    ]);
    // The SDK and the Node-free contracts it is compiled with (the wire package holds nothing else:
    // test/architecture/wire-package.test.ts).
    const unwanted = paths.filter((path) =>
      /^(src|test)\/|\.map$|tsbuildinfo|^dist\/(?!client\/src\/|protocol\/src\/(protocol|channels|util)\/|eventsource-parser\.LICENSE$)/.test(
        path,
      ),
    );
    expect(unwanted).toEqual([]);
  });

  it('installs with no warning, no server dependency and under 1 MB', async () => {
    expect(pack.installOutput).not.toMatch(/warn|EBADENGINE/i);
    const { stdout } = await run(NPM, ['ls', '--all', '--json'], { cwd: consumer }).catch(
      (error: { stdout: string }) => ({ stdout: error.stdout }),
    );
    const names = new Set(installedNames(JSON.parse(stdout) as LsNode));
    const client = manifest(PACKAGE);
    expect([...names].sort()).toEqual([client.name, ...Object.keys(client.dependencies ?? {})].sort());
    // What the server package needs and the client must not pull in.
    const clientDependencies = new Set(Object.keys(client.dependencies ?? {}));
    const serverOnly = Object.keys(manifest(ROOT).dependencies ?? {}).filter(
      (name) => !clientDependencies.has(name),
    );
    expect(serverOnly).toEqual(expect.arrayContaining(['fastify', 'ioredis', 'pino', 'undici', 'zod']));
    expect(serverOnly.filter((name) => names.has(name))).toEqual([]);
    expect(diskKbUnder(consumer)).toBeLessThan(MAX_INSTALLED_KB);
  });

  it("keeps a live book with the README's snippet in Node", async () => {
    const output = pack.runSnippet(readmeSnippet(join(PACKAGE, 'README.md'), '@market-relay/client'));
    await waitFor('two book updates printed by the snippet', () => output().split('best bid').length > 2, {
      timeoutMs: 20_000,
    });
    expect(output()).not.toMatch(/Error/);
  });

  it('bundles for browsers without Node modules', async () => {
    const code = await pack.browserBundle('@market-relay/client');
    expect(code).toContain('globalThis');
    expect(code).not.toMatch(/from ["'](ws|node:[a-z]+)["']|require\(["'](ws|node:[a-z]+)["']\)/);
  });

  it('type-checks a browser project against its declarations (no Node types)', async () => {
    writeFileSync(
      join(consumer, 'check.ts'),
      [
        "import { type BookState, connect, type RelayClient } from '@market-relay/client';",
        "const relay: RelayClient = connect(['wss://a.example', 'wss://b.example'], { apiKey: 'k' });",
        "const book = relay.subscribeBook('3f2b8c1e-5d4a-4e6b-9c7d-1a2b3c4d5e6f', { depth: 10 });",
        "book.on('update', ({ state }: { state: BookState }) => {",
        "  document.title = state.bids[0]?.[0] ?? '';",
        '});',
        '',
      ].join('\n'),
    );
    writeFileSync(
      join(consumer, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2023',
          lib: ['es2023', 'dom'],
          types: [],
          skipLibCheck: false,
        },
        files: ['check.ts'],
      }),
    );
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const result = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: consumer }).catch(
      (error: { stdout: string }) => ({ stdout: error.stdout }),
    );
    expect(result.stdout).toBe('');
  });
});
