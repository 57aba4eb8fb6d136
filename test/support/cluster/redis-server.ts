/**
 * @module test/support/cluster/redis-server
 * A private `redis-server` on a free port, with nothing persisted; never the machine's shared
 * Redis. No test runner here: the benchmarks start theirs with it too (bench/scenarios/cluster.ts).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { accessSync, constants } from 'node:fs';
import { createServer } from 'node:net';
import { delimiter, join } from 'node:path';
import { redisAnswersPing } from '../../../src/workers/private-redis.ts';
import { waitFor } from '../wait-for.ts';

export interface RedisServer {
  url: string;
  port: number;
  stop(): Promise<void>;
}

export function findRedisServer(): string | undefined {
  return findBinary('redis-server');
}

/** `name` on the PATH, executable; undefined when absent. */
export function findBinary(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

export function answersPing(port: number): Promise<boolean> {
  return redisAnswersPing({ port, host: '127.0.0.1' });
}

/** How often a server is started on other free ports when the ones found were taken meanwhile. */
const PORT_ATTEMPTS = 5;

/**
 * `redis-server` started with `args(ports)` on `count` free ports, once it answers PING on the
 * first. A port found free may be taken before the server binds it (another test's server, or an
 * outgoing connection's local port on a busy machine): the server then exits at once, and it is
 * started again on other ports. `ports` given: those, one try.
 */
export async function spawnRedisOnFreePorts(
  binary: string,
  count: number,
  args: (ports: number[]) => string[],
  ports?: number[],
): Promise<{ child: ChildProcess; ports: number[] }> {
  for (let attempt = 1; ; attempt += 1) {
    const chosen = ports ?? (await Promise.all(Array.from({ length: count }, () => freePort())));
    const child = spawn(binary, args(chosen), { stdio: 'ignore' });
    const gone = () => child.exitCode !== null || child.signalCode !== null;
    const outcome = await waitFor(`redis-server on port ${chosen[0]}`, async () =>
      gone() ? 'exited' : (await answersPing(chosen[0]!)) && 'up',
    );
    if (outcome === 'up') return { child, ports: chosen };
    if (ports !== undefined || attempt === PORT_ATTEMPTS)
      throw new Error(`redis-server exited at start on port ${chosen[0]} (${attempt} tries)`);
  }
}

/** `port`: restart on the port of a stopped server (an outage and its recovery). */
export async function startRedis(port?: number): Promise<RedisServer> {
  const binary = findRedisServer();
  if (binary === undefined) throw new Error('redis-server not found');
  const started = await spawnRedisOnFreePorts(
    binary,
    1,
    ([chosen]) => [
      ...['--port', String(chosen), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      ...['--daemonize', 'no'],
    ],
    port === undefined ? undefined : [port],
  );
  const { child } = started;
  port = started.ports[0]!;
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}
