/**
 * @module test/support/child-relay
 * A relay in its own process (`market-relay serve`), as an operator runs it: it can be stopped with
 * SIGTERM (graceful shutdown) or killed with SIGKILL (a crash), which an in-process relay cannot.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { waitFor } from './wait-for.ts';

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

/** Starts `market-relay serve` with `args` (a free port is chosen unless `--port` is given). */
export async function startChildRelay(args: readonly string[]): Promise<ChildRelay> {
  const child = spawn(process.execPath, ['bin/market-relay.js', 'serve', '--port=0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
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
