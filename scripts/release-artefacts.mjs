// `npm run release-artefacts [-- --out DIR] [-- --only js|python]`: the clients' release artefacts
// in one folder (default `release/`): the JS SDK's tarball as `npm pack` makes it (what
// `npm publish` of @market-relay/client uploads) and the Python client's wheel, built by pip from a
// copy of clients/python (what `twine upload` uploads). Nothing is downloaded: the Python (`$PYTHON`,
// else `python3`) needs pip, setuptools and wheel (Debian: python3-pip python3-setuptools
// python3-wheel). Older artefacts of the same names in the folder are replaced; nothing else there
// is touched.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = fileURLToPath(new URL('..', import.meta.url));
const { values } = parseArgs({
  options: { out: { type: 'string', default: 'release' }, only: { type: 'string' } },
});
if (values.only !== undefined && values.only !== 'js' && values.only !== 'python') {
  console.error(`--only: expected js or python, got ${values.only}`);
  process.exit(2);
}
const out = resolve(values.out);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const python = process.env.PYTHON ?? 'python3';
const artefact = /^(market-relay-client-.*\.tgz|market_relay-.*\.whl)$/;

mkdirSync(out, { recursive: true });
for (const name of readdirSync(out)) {
  const replaced =
    values.only === 'js' ? name.endsWith('.tgz') : values.only === 'python' ? name.endsWith('.whl') : true;
  if (artefact.test(name) && replaced) rmSync(join(out, name));
}

if (values.only !== 'python') {
  // `prepack` builds the package first.
  execFileSync(npm, ['pack', '--workspace', '@market-relay/client', '--pack-destination', out], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

if (values.only !== 'js') {
  // pip builds in the source tree (build/, *.egg-info): build a copy, never the repository.
  const work = mkdtempSync(join(tmpdir(), 'market-relay-wheel-'));
  try {
    cpSync(join(root, 'clients', 'python'), work, {
      recursive: true,
      filter: (path) => !/(^|\/)(build|__pycache__|[^/]*\.egg-info|tests|examples|bench)$/.test(path),
    });
    const pip = ['-m', 'pip', 'wheel', '--quiet', '--disable-pip-version-check', '--no-deps', '--no-index'];
    execFileSync(python, [...pip, '--no-build-isolation', '--wheel-dir', out, work], { stdio: 'inherit' });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

for (const name of readdirSync(out)
  .filter((name) => artefact.test(name))
  .sort())
  console.log(`${join(values.out, name)}  ${Math.round(statSync(join(out, name)).size / 1024)} KB`);
