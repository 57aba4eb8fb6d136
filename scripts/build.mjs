// `npm run build` (and `prepare`): compiles the server (src/) and the packages it takes the SDK and
// the wire contracts from (packages/*/src/) to dist/ (dist/src/, dist/packages/), copies the status
// page's browser app (src/status-page/, static files) to dist/src/status-page/ and bundles the
// client SDK for that app (dist/src/http/assets/client.js), so the relay serves a prebuilt file and
// never bundles at run time.
// The new tree is built aside and swapped in at the end: a relay or a test reading dist/ meanwhile
// never finds it half built.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = `${root}dist`;
const staging = `${root}dist.building`;
const retired = `${root}dist.old`;

rmSync(staging, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json', '--outDir', staging], {
  cwd: root,
  stdio: 'inherit',
});
// The app's files only: its README is for readers of the sources.
cpSync(`${root}src/status-page`, `${staging}/src/status-page`, {
  recursive: true,
  filter: (source) => !source.endsWith('README.md'),
});
await build({
  entryPoints: [`${root}packages/client/src/index.ts`],
  outfile: `${staging}/src/http/assets/client.js`,
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  logLevel: 'warning',
  legalComments: 'none',
});

rmSync(retired, { recursive: true, force: true });
if (existsSync(out)) renameSync(out, retired);
renameSync(staging, out);
rmSync(retired, { recursive: true, force: true });
