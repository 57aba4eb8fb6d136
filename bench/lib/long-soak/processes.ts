/**
 * @module bench/lib/long-soak/processes
 * The long soak's servers, each a process of its own as an operator runs it: the simulator
 * (`market-relay sim`) and the relays (`market-relay serve`), each relay with its V8 inspector on a
 * free loopback port so that the sampler can force a GC in it from outside. Their output is kept
 * (the last 64 kB) for the record when one of them dies.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { appendFileSync, readdirSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { relayEntryPoint } from '../../../test/support/cluster/child-relay.ts';
import { waitFor } from '../../../test/support/wait-for.ts';

export interface SoakProcess {
  readonly name: string;
  readonly pid: number | undefined;
  /** Its HTTP base URL. */
  readonly url: string;
  /** The inspector's WebSocket URL (relays only). */
  readonly inspectorUrl: string | undefined;
  /** The process ended before `stop` (a crash): its exit and last output. */
  crashed(): string | undefined;
  output(): string;
  stop(): Promise<void>;
}

const OUTPUT_KEPT = 65_536;

async function startProcess(
  name: string,
  nodeFlags: string[],
  args: string[],
  listening: RegExp,
  logFile?: string,
): Promise<SoakProcess> {
  const child: ChildProcess = spawn(process.execPath, [...nodeFlags, relayEntryPoint(), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let stopping = false;
  let exit: string | undefined;
  const collect = (chunk: Buffer) => {
    if (logFile !== undefined) appendFileSync(logFile, chunk);
    output = (output + chunk.toString()).slice(-OUTPUT_KEPT);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  child.on('exit', (code, signal) => {
    if (!stopping) exit = `exited with code ${code}, signal ${signal}`;
  });
  const found = await waitFor(
    `${name} to listen`,
    () => {
      if (child.exitCode !== null) throw new Error(`${name} exited: ${output.slice(-500)}`);
      const url = listening.exec(output)?.[1];
      const inspectorUrl = /Debugger listening on (ws:\/\/\S+)/.exec(output)?.[1];
      return url !== undefined && { url, inspectorUrl };
    },
    { timeoutMs: 30_000, everyMs: 20 },
  ).catch((error: unknown) => {
    child.kill('SIGKILL');
    throw error;
  });
  return {
    name,
    pid: child.pid,
    url: found.url,
    inspectorUrl: found.inspectorUrl,
    crashed: () => (exit === undefined ? undefined : `${exit}: ${output.slice(-2_000)}`),
    output: () => output,
    async stop() {
      stopping = true;
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** `market-relay sim` on a free port. */
export function startSimProcess(args: string[]): Promise<SoakProcess> {
  return startProcess(
    'simulator',
    [],
    ['sim', '--port=0', '--log-level=warn', ...args],
    /market-relay sim listening on (http:\/\/\S+)/,
  );
}

/**
 * `market-relay serve` on a free port, with its inspector on a free loopback port. With
 * `profileDir`, for finding what grows and what holds the event loop: the relay writes a CPU
 * profile there when it exits and a heap snapshot each time it gets SIGUSR2, and logs its garbage
 * collections (`--trace-gc`) into `<profileDir>/<name>.log` with the rest of its output.
 */
export function startRelayProcess(name: string, args: string[], profileDir?: string): Promise<SoakProcess> {
  const profiling =
    profileDir === undefined
      ? []
      : ['--cpu-prof', '--heapsnapshot-signal=SIGUSR2', '--trace-gc', `--diagnostic-dir=${profileDir}`];
  return startProcess(
    name,
    ['--inspect=127.0.0.1:0', ...profiling],
    ['serve', '--port=0', '--log-level=warn', ...args],
    /market-relay listening on (http:\/\/[^"\s]+)/,
    profileDir === undefined ? undefined : join(profileDir, `${name.replaceAll(' ', '-')}.log`),
  );
}

/**
 * The harness's niceness: the crowd and the simulator stand for clients and an upstream on other
 * machines, so on a machine of two cores they yield the cores to the relays rather than share them
 * equally (the relays' event-loop delay is then the relays' own, and the time the relays still wait
 * for a core is sampled and reported beside it). The orchestrator keeps its priority: what it
 * starts (a Redis restarted) would inherit its niceness.
 */
export const HARNESS_NICENESS = 10;

/**
 * Lowers the priority of every thread of process `pid` (Linux sets niceness per thread; threads
 * made later inherit their maker's). Where that is refused, the harness runs at its normal
 * priority and says so.
 */
export function yieldToRelays(pid: number | undefined, name: string): void {
  if (pid === undefined) return;
  try {
    const threads = readdirSync(`/proc/${pid}/task`).map(Number);
    for (const thread of threads) os.setPriority(thread, HARNESS_NICENESS);
  } catch (error) {
    console.warn(`${name} keeps its priority: ${error instanceof Error ? error.message : String(error)}`);
  }
}
