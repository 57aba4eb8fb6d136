/**
 * The getting-started guides of docs/getting-started/ run as written: each code block is taken
 * from the page and run against a simulator and relay this test starts on free ports. The UI's
 * script prints a live book; the bot quotes, and pulls its quotes when upstream fails; the
 * operator's commands start a relay from the environment the guide sets, and its checks pass.
 * The scripts import `market-relay/client` as a user does: the built package (`npm run build`).
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { type SimulatorHandle, startSimulator } from '../../src/sim/server.ts';
import { type Harness, startHarness } from '../support/harness.ts';
import { waitFor } from '../support/wait-for.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);

/** The code blocks of one guide whose info string is exactly `lang`. */
function blocks(guide: string, lang: string): string[] {
  const page = readFileSync(join(ROOT, 'docs', 'getting-started', guide), 'utf8');
  return [...page.matchAll(/```([^\n]*)\n([\s\S]*?)\n```/g)]
    .filter((match) => match[1] === lang)
    .map((match) => match[2]!);
}

/** A folder where `import 'market-relay/client'` resolves to this package, as in a user's project. */
const project = mkdtempSync(join(tmpdir(), 'market-relay-guides-'));
mkdirSync(join(project, 'node_modules'));
symlinkSync(ROOT, join(project, 'node_modules', 'market-relay'), 'dir');
afterAll(() => rmSync(project, { recursive: true, force: true }));

const children: ChildProcess[] = [];
let harness: Harness | undefined;
let sim: SimulatorHandle | undefined;
afterEach(async () => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  await harness?.stop();
  await sim?.close();
  harness = undefined;
  sim = undefined;
});

/** Starts a process and collects what it prints, stdout and stderr together. */
function start(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): { child: ChildProcess; output: () => string } {
  const child = spawn(command, args, { cwd: project, env: { ...process.env, ...env } });
  children.push(child);
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  return { child, output: () => output };
}

function runScript(guide: string, name: string, env: NodeJS.ProcessEnv) {
  const [code] = blocks(guide, 'js');
  expect(code, `${guide} has a js block`).toBeDefined();
  writeFileSync(join(project, name), code!);
  return start(process.execPath, [name], env);
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

describe('docs/getting-started', () => {
  it('ui.md: the script prints the live book and its changes', async () => {
    harness = await startHarness({ sim: { markets: 3 } });
    const script = runScript('ui.md', 'live-book.mjs', { RELAY_URL: harness.relay.url });
    await waitFor('a rendered book', () => /book \S+ \(live\)\n {2}ask /.test(script.output()), {
      timeoutMs: 20_000,
    });
    const rendered = () => script.output().split('book ').length;
    const before = rendered();
    const ticks = setInterval(() => harness?.sim.tick(), 50);
    try {
      await waitFor('the book rendered again after a change', () => rendered() > before, {
        timeoutMs: 10_000,
      });
    } finally {
      clearInterval(ticks);
    }
    expect(script.output()).not.toMatch(/Error/);
  });

  it('bot.md: the bot quotes, and pulls its quotes when the price goes stale', async () => {
    harness = await startHarness({ sim: { markets: 3 }, relay: { tuning: { upstreamRetries: 0 } } });
    const bot = runScript('bot.md', 'bot.mjs', { RELAY_URL: harness.relay.url });
    await waitFor('a quote', () => bot.output().includes('quote '), { timeoutMs: 20_000 });
    harness.sim.setFaults({ errorRate: 1 });
    await waitFor('quotes pulled', () => /pull quotes: price is stale/.test(bot.output()), {
      timeoutMs: 10_000,
    });
    expect(bot.output()).not.toMatch(/Error/);
  });

  it('operator.md: the relay starts from the settings and its checks pass', async () => {
    sim = await startSimulator({ markets: 3, seed: 1, tickMs: 0 });
    const bin = join(project, 'bin');
    mkdirSync(bin, { recursive: true });
    writeFileSync(
      join(bin, 'market-relay'),
      `#!/bin/sh\nexec "${process.execPath}" "${ROOT}bin/market-relay.js" "$@"\n`,
    );
    chmodSync(join(bin, 'market-relay'), 0o755);
    expect(blocks('operator.md', 'sh env')).toHaveLength(1);
    // The guide's settings, with this test's upstream and free ports in place of its examples.
    const env = {
      PATH: `${bin}:${process.env.PATH}`,
      UPSTREAM_URL: sim.url,
      PORT: String(await freePort()),
      OPERATOR_PORT: String(await freePort()),
      API_KEYS: 'key-of-client-a,key-of-client-b',
      OPERATOR_KEY: 'an-operator-key-for-this-test',
      TRUSTED_PROXY_DEPTH: '1',
      UPSTREAM_RPS: '50',
    };
    const exported = [...blocks('operator.md', 'sh env')[0]!.matchAll(/^export (\w+)=/gm)].map((m) => m[1]);
    expect(exported.sort()).toEqual(
      Object.keys(env)
        .filter((name) => name !== 'PATH')
        .sort(),
    );
    const [serve] = blocks('operator.md', 'sh serve');
    // exec: the relay itself gets the SIGTERM below, as it would from a process manager.
    const relay = start('sh', ['-c', `exec ${serve!}`], env);
    await waitFor('the relay listening', () => relay.output().includes('market-relay listening on'), {
      timeoutMs: 30_000,
    });
    const checks = blocks('operator.md', 'sh check');
    expect(checks.length).toBeGreaterThanOrEqual(2);
    for (const check of checks) {
      const { stdout } = await run('sh', ['-ec', check], { cwd: project, env: { ...process.env, ...env } });
      expect(stdout.trim(), check).not.toBe('');
    }
    relay.child.kill('SIGTERM');
    const code = await new Promise<number | null>((resolve) => relay.child.once('exit', resolve));
    expect(code).toBe(0);
  });
});
