/**
 * The clients' release artefacts as `npm run release-artefacts` makes them into one folder: the JS
 * SDK's tarball, which `npm publish --dry-run` accepts as @market-relay/client (public, so that
 * publishing is that one command without the dry run), and the Python client's wheel, which installs
 * into a fresh virtual environment (`--system-site-packages` from Debian's Python, so its
 * dependencies come from there and nothing is downloaded) and imports there, typed. Outside CI, the
 * wheel's part is skipped with a line saying what to install when that Python lacks a module.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NPM, ROOT, run } from '../../support/clients/packed-package.ts';
import { pythonAvailable, SYSTEM_PYTHON } from '../../support/clients/python-client.ts';

const withPython = await pythonAvailable();
const MAX_BUFFER = 16 * 1024 * 1024;

describe('the release artefacts', () => {
  const out = mkdtempSync(join(tmpdir(), 'market-relay-release-'));
  const artefact = (pattern: RegExp) => readdirSync(out).find((name) => pattern.test(name));

  beforeAll(async () => {
    await run(
      process.execPath,
      ['scripts/release-artefacts.mjs', '--out', out, ...(withPython ? [] : ['--only', 'js'])],
      { cwd: ROOT, env: { ...process.env, PYTHON: SYSTEM_PYTHON }, maxBuffer: MAX_BUFFER },
    );
  }, 240_000);

  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it('holds a tarball that npm publish --dry-run accepts as the public @market-relay/client', async () => {
    const tarball = artefact(/^market-relay-client-\d+\.\d+\.\d+\.tgz$/);
    expect(tarball).toBeDefined();
    const { stdout, stderr } = await run(NPM, ['publish', '--dry-run', `./${tarball}`], {
      cwd: out,
      maxBuffer: MAX_BUFFER,
    });
    expect(stdout).toMatch(/^\+ @market-relay\/client@\d+\.\d+\.\d+$/m);
    expect(stderr).toMatch(/with tag latest and public access \(dry-run\)/);
  });

  it.skipIf(!withPython)('holds a wheel that installs into a fresh environment and imports', async () => {
    const wheel = artefact(/^market_relay-\d+\.\d+\.\d+-py3-none-any\.whl$/);
    expect(wheel).toBeDefined();
    const venv = join(out, 'venv');
    await run(SYSTEM_PYTHON, ['-m', 'venv', '--system-site-packages', '--without-pip', venv]);
    const python = join(venv, 'bin', 'python');
    // Debian's pip, run by the environment's interpreter, installs into the environment.
    const pip = ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--no-index'];
    await run(python, [...pip, join(out, wheel!)], { maxBuffer: MAX_BUFFER });
    const { stdout } = await run(python, [
      '-c',
      [
        'import importlib.metadata, importlib.resources, market_relay',
        'print(market_relay.__file__.startswith(' + JSON.stringify(venv) + '))',
        'print(importlib.metadata.version("market-relay"))',
        'print(importlib.resources.files("market_relay").joinpath("py.typed").is_file())',
        'print(callable(market_relay.connect))',
      ].join('\n'),
    ]);
    expect(stdout.trim().split('\n')).toEqual(['True', wheel!.split('-')[1], 'True', 'True']);
  });
});
