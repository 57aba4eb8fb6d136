/**
 * @module test/support/cluster/child-relay
 * A relay in its own process (`market-relay serve`), as an operator runs it: it can be stopped with
 * SIGTERM (graceful shutdown) or killed with SIGKILL (a crash), which an in-process relay cannot.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '../wait-for.ts';

let entryPoint: string | undefined;

/**
 * What a child relay runs: the compiled `dist/src/cli.js` when it is newer than every source file (as
 * after `npm ci` or `npm run build`), else the sources through tsx (`bin/market-relay.js`), so an
 * edit is never tested stale. Compiled, a relay starts in about half the time, which the tests that
 * start several relays (a rolling restart starts six) feel most on a busy machine.
 */
export function relayEntryPoint(): string {
  entryPoint ??= isBuildCurrent() ? 'dist/src/cli.js' : 'bin/market-relay.js';
  return entryPoint;
}

function isBuildCurrent(): boolean {
  let built: number;
  try {
    built = statSync('dist/src/cli.js').mtimeMs;
  } catch {
    return false;
  }
  const newestSource = (dir: string): number =>
    Math.max(
      0,
      ...readdirSync(dir, { withFileTypes: true }).map((entry) =>
        entry.isDirectory() ? newestSource(join(dir, entry.name)) : statSync(join(dir, entry.name)).mtimeMs,
      ),
    );
  return Math.max(...['src', 'packages/protocol/src', 'packages/client/src'].map(newestSource)) <= built;
}

export interface ChildRelay {
  url: string;
  /** Its cluster instance id (from its `cluster_joined` log line, at the default log level). */
  instance(): Promise<string>;
  readonly process: ChildProcess;
  /** Everything it printed so far (logs included): for failure messages. */
  output(): string;
  /** Sends `signal` and waits for the process to exit. */
  stop(signal: 'SIGTERM' | 'SIGKILL'): Promise<void>;
}

export interface ChildRelayOptions {
  /** The CLI to run (a built `dist/src/cli.js` of another checkout, say); relayEntryPoint() unless set. */
  entryPoint?: string;
  /** Node's own flags, before the CLI (as `npm start` passes `--initial-old-space-size`). */
  nodeArgs?: readonly string[];
}

/** Starts `market-relay serve` with `args` (a free port is chosen unless `--port` is given). */
export async function startChildRelay(
  args: readonly string[],
  options: ChildRelayOptions = {},
): Promise<ChildRelay> {
  const entry = options.entryPoint ?? relayEntryPoint();
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), entry, 'serve', '--port=0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    // Records nothing unless asked (a `--history` flag wins over the environment): a test's or a
    // benchmark's relay never writes a store into the folder it was started from.
    env: { HISTORY: 'off', ...process.env },
  });
  let output = '';
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  try {
    const url = await waitFor(
      'the child relay to listen',
      () => {
        if (child.exitCode !== null) throw new Error(`child relay exited: ${output.slice(-500)}`);
        return /market-relay listening on (http:\/\/[^"\s]+)/.exec(output)?.[1];
      },
      { timeoutMs: 20_000, everyMs: 20 },
    );
    return {
      url,
      instance: () =>
        waitFor('its cluster instance id', () => /"instance":"([0-9a-f]+)"/.exec(output)?.[1], {
          timeoutMs: 20_000,
        }),
      process: child,
      output: () => output,
      async stop(signal) {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = once(child, 'exit');
        child.kill(signal);
        await exited;
      },
    };
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
}
