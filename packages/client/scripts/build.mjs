// `npm run build` of @market-relay/client (and its `prepack`): the type declarations from tsc, one
// .d.ts per source file as the editor shows them; the code bundled by esbuild, one file per entry
// (`index.js` for browsers, `node.js` for Node) and one shared chunk, in place of one file per
// source file: on disk (4 KB a file at least) the many small files took more than the code.
// `eventsource-parser` (a few KB of code, shipped with source maps and a CommonJS copy) is bundled
// in with its licence beside it; `ws`, `big.js` and `crc-32` stay dependencies, shared with the
// application's own copies.
import { execFileSync } from 'node:child_process';
import { copyFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = fileURLToPath(new URL('..', import.meta.url));
const out = `${here}dist`;
const require = createRequire(import.meta.url);

rmSync(out, { recursive: true, force: true });
execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.json'], {
  cwd: here,
  stdio: 'inherit',
});
await build({
  entryPoints: [`${here}src/index.ts`, `${here}src/node.ts`],
  // Beside the declarations tsc wrote for the same entries: the `exports` map names both.
  outdir: `${out}/client/src`,
  chunkNames: 'shared-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'neutral',
  mainFields: ['module', 'main'],
  target: 'es2022',
  external: ['ws', 'big.js', 'crc-32', 'node:*'],
  legalComments: 'none',
  logLevel: 'warning',
});
copyFileSync(require.resolve('eventsource-parser/package.json').replace(/package\.json$/, 'LICENSE'), `${out}/eventsource-parser.LICENSE`);
