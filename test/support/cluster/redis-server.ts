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

/** `port`: restart on the port of a stopped server (an outage and its recovery). */
export async function startRedis(port?: number): Promise<RedisServer> {
  const binary = findRedisServer();
  if (binary === undefined) throw new Error('redis-server not found');
  port ??= await freePort();
  const child: ChildProcess = spawn(
    binary,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'],
    { stdio: 'ignore' },
  );
  await waitFor(`redis-server on port ${port}`, () => answersPing(port));
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
