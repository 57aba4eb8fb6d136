/**
 * @module test/support/clients/python-client
 * The Python client (clients/python) as a user installs it: `pip install` of a copy of the folder
 * into an empty virtual environment made with `--system-site-packages`, where `websockets` and
 * `pytest` come from Debian's packages; then its pytest suite run against the relays a test started.
 *
 * The environment is made once per content of clients/python and kept under the system's temp
 * folder, so the test files that use it (and later runs) share it; it is made in a fresh folder and
 * renamed into place, so two test files starting at once cannot see a half-made one. One test file
 * makes it while the others wait (a lock folder beside it): four `pip install`s at once on a busy
 * machine each took longer than a test's hook may.
 */
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Debian's interpreter, where `apt-get install python3-websockets python3-jsonpatch python3-pytest` puts the packages. */
export const SYSTEM_PYTHON = process.env.MARKET_RELAY_PYTHON ?? '/usr/bin/python3';
const CLIENT_DIR = fileURLToPath(new URL('../../../clients/python', import.meta.url));
const PACKAGES =
  'python3-websockets python3-jsonpatch python3-pytest python3-setuptools python3-venv python3-pip';

/** Whether the Python client's tests can run here; prints what to install when they cannot. */
export async function pythonAvailable(): Promise<boolean> {
  const missing = await missingPython();
  if (missing === undefined) return true;
  if (process.env.CI) throw new Error(`${missing}: required in CI (.ci/run installs ${PACKAGES})`);
  console.warn(`skipping the Python client's tests: ${missing} (apt-get install ${PACKAGES})`);
  return false;
}

async function missingPython(): Promise<string | undefined> {
  if (!existsSync(SYSTEM_PYTHON)) return `${SYSTEM_PYTHON} not found`;
  try {
    await run(SYSTEM_PYTHON, ['-c', 'import websockets, jsonpatch, pytest, setuptools, wheel, venv, pip']);
    return undefined;
  } catch {
    return `${SYSTEM_PYTHON} lacks websockets, jsonpatch, pytest, setuptools, wheel, venv or pip`;
  }
}

/** What is not part of the installed package: build output, caches, and the tests and examples run from the clone. */
const NOT_INSTALLED = /(^|\/)(build|__pycache__|[^/]*\.egg-info|\.[^/]*|tests|examples)$/;

/** Files of the client that make up the installed package. */
function clientFiles(dir = CLIENT_DIR): string[] {
  const files: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    if (NOT_INSTALLED.test(name)) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) files.push(...clientFiles(path));
    else files.push(path);
  }
  return files;
}

/** The interpreter of a virtual environment holding the installed client (made on first use). */
export async function installedPythonClient(): Promise<string> {
  const hash = createHash('sha256').update(SYSTEM_PYTHON);
  for (const file of clientFiles()) hash.update(relative(CLIENT_DIR, file)).update(readFileSync(file));
  const home = join(tmpdir(), `market-relay-python-${hash.digest('hex').slice(0, 16)}`);
  const python = join(home, 'bin', 'python');
  const lock = `${home}.lock`;
  for (;;) {
    if (existsSync(join(home, 'installed'))) return python;
    try {
      mkdirSync(lock);
      break;
    } catch {
      // Another test file is making it; a lock left by a run that was killed is taken over.
      const madeAt = statSync(lock, { throwIfNoEntry: false })?.mtimeMs;
      if (madeAt !== undefined && Date.now() - madeAt > STALE_LOCK_MS) {
        rmSync(lock, { recursive: true, force: true });
      }
      await sleep(100);
    }
  }
  try {
    if (!existsSync(join(home, 'installed'))) await makeEnvironment(home);
    return python;
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** A lock older than this was left by a run that did not finish: the making takes seconds. */
const STALE_LOCK_MS = 120_000;

async function makeEnvironment(home: string): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'market-relay-python-'));
  try {
    const venv = join(work, 'venv');
    const source = join(work, 'source');
    // pip builds in the source tree (build/, *.egg-info): build a copy, never the repository.
    cpSync(CLIENT_DIR, source, {
      recursive: true,
      filter: (path) => !/(^|\/)(build|__pycache__)$/.test(path),
    });
    await run(SYSTEM_PYTHON, ['-m', 'venv', '--system-site-packages', '--without-pip', venv]);
    // Debian's pip, run by the environment's interpreter, installs into the environment; --no-index:
    // the dependencies (websockets, jsonpatch) must be met by what is installed, nothing is downloaded.
    await run(join(venv, 'bin', 'python'), [
      '-m',
      'pip',
      'install',
      '--quiet',
      '--no-index',
      '--no-build-isolation',
      '--disable-pip-version-check',
      source,
    ]);
    // The marker is written last: its presence means a complete environment.
    writeFileSync(join(venv, 'installed'), '');
    try {
      renameSync(venv, home);
    } catch (error) {
      // Another test file made the same environment first: use that one.
      if (!existsSync(join(home, 'installed'))) throw error;
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

export interface PytestRun {
  code: number | null;
  output: string;
}

/**
 * Runs the client's pytest suite (`tests`: files under clients/python/tests) with `env` added. A run
 * that outlives `timeoutMs` is killed and answered with what it printed, so that a hang shows where.
 */
export function runPytest(
  python: string,
  tests: readonly string[],
  env: Record<string, string>,
  timeoutMs = 25_000,
): Promise<PytestRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      python,
      [
        '-m',
        'pytest',
        '-q',
        '-p',
        'no:cacheprovider',
        ...tests.map((test) => join(CLIENT_DIR, 'tests', test)),
      ],
      {
        cwd: CLIENT_DIR,
        env: { ...process.env, ...env, PYTHONDONTWRITEBYTECODE: '1', PYTHONFAULTHANDLER: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    const collect = (chunk: Buffer) => {
      output += chunk.toString();
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    // SIGABRT first: the fault handler prints every thread's stack; SIGKILL if that does not end it.
    const timer = setTimeout(() => {
      output += `\n[killed after ${timeoutMs} ms]\n`;
      child.kill('SIGABRT');
      setTimeout(() => child.kill('SIGKILL'), 1_000).unref();
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}
