/**
 * The Python client's types hold under `mypy --strict`: the package itself, and its examples, one of
 * which (clients/python/examples/typed_bot.py) uses every channel's state and every reply type; and
 * mypy rejects a bot's misspelt event name, option or field (clients/python/tests/test_typing.py).
 * Debian's mypy (`python3-mypy`, 1.0.1 on Python 3.11): outside CI a machine without it skips this
 * file with a line saying so.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { runPytest, SYSTEM_PYTHON } from '../support/clients/python-client.ts';

const run = promisify(execFile);
const CLIENT_DIR = fileURLToPath(new URL('../../clients/python', import.meta.url));

/** Whether mypy runs here; prints what to install when it does not (and fails in CI). */
async function mypyAvailable(): Promise<boolean> {
  try {
    await run(SYSTEM_PYTHON, ['-c', 'import mypy.api, pytest, websockets, jsonpatch']);
    return true;
  } catch {
    const missing = `${SYSTEM_PYTHON} lacks mypy (or pytest, websockets, jsonpatch)`;
    if (process.env.CI) throw new Error(`${missing}: required in CI (.ci/run installs python3-mypy)`);
    console.warn(`skipping the Python client's type checks: ${missing} (apt-get install python3-mypy)`);
    return false;
  }
}

describe.skipIf(!(await mypyAvailable()))('the Python client under mypy --strict', () => {
  const cache = mkdtempSync(join(tmpdir(), 'market-relay-mypy-'));
  afterAll(() => rmSync(cache, { recursive: true, force: true }));

  it('passes over the package and every example, typed_bot.py among them', async () => {
    const examples = readdirSync(join(CLIENT_DIR, 'examples'))
      .filter((name) => name.endsWith('.py'))
      .map((name) => join('examples', name));
    expect(examples).toContain(join('examples', 'typed_bot.py'));
    // In the client's folder: its pyproject.toml holds mypy's settings.
    const checked = await run(
      SYSTEM_PYTHON,
      ['-m', 'mypy', '--strict', '--cache-dir', cache, join('src', 'market_relay'), ...examples],
      { cwd: CLIENT_DIR },
    ).then(
      ({ stdout }) => ({ code: 0, output: stdout }),
      (error: { code: number; stdout: string; stderr: string }) => ({
        code: error.code,
        output: error.stdout + error.stderr,
      }),
    );
    expect(checked, checked.output).toEqual({
      code: 0,
      output: expect.stringMatching(/^Success: no issues found/),
    });
  });

  it('rejects a misspelt event name, option or field', async () => {
    // The first test's cache: the package is not checked again.
    const result = await runPytest(SYSTEM_PYTHON, ['test_typing.py'], { MYPY_CACHE_DIR: cache });
    expect(result.code, result.output).toBe(0);
    expect(result.output).not.toMatch(/skipped/);
  });
});
