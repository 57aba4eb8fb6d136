/**
 * @module workers/private-redis
 * The `redis-server` a machine's workers coordinate over when `--workers` has no `--redis`: on a
 * Unix socket (no port to collide with, and only this user may connect) in a temporary directory of
 * its own, nothing persisted. Restarted if it dies while the workers run (they fail open meanwhile,
 * docs/cluster.md "Redis outages"); stopped, and its directory removed, by `stop()`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect, type NetConnectOpts } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

const READY_DEADLINE_MS = 10_000;
const RESTART_DELAY_MS = 1_000;

export interface PrivateRedis {
  /** The socket's path, as `--redis` would be given to a relay (ioredis takes a path). */
  readonly path: string;
  stop(): Promise<void>;
}

export interface PrivateRedisEvents {
  /** It died by itself; restarted after a second. */
  exited(code: number | null, signal: NodeJS.Signals | null): void;
}

export async function startPrivateRedis(events: PrivateRedisEvents): Promise<PrivateRedis> {
  const dir = await mkdtemp(join(tmpdir(), 'market-relay-'));
  const path = join(dir, 'redis.sock');
  let stopping = false;
  let child: ChildProcess;

  const start = async (): Promise<void> => {
    child = spawn(
      'redis-server',
      [
        ...['--port', '0', '--unixsocket', path, '--unixsocketperm', '700', '--dir', dir],
        ...['--save', '', '--appendonly', 'no', '--daemonize', 'no', '--loglevel', 'warning'],
      ],
      // Its own process group: a Ctrl-C or a supervisor's signal to the group must not stop it
      // before the workers that release their leases in it on the way out; stop() stops it after them.
      { stdio: 'ignore', detached: true },
    );
    const started = child;
    const spawnFailed = once(started, 'error').then(([error]) => {
      throw (error as NodeJS.ErrnoException).code === 'ENOENT'
        ? new Error(
            '--workers needs Redis: give --redis URL, or install redis-server (apt-get install redis-server)',
          )
        : error;
    });
    started.once('exit', (code, signal) => {
      if (stopping) return;
      events.exited(code, signal);
      void delay(RESTART_DELAY_MS).then(() => (stopping ? undefined : start().catch(() => undefined)));
    });
    await Promise.race([spawnFailed, answersPing(path, started)]);
  };

  try {
    await start();
  } catch (error) {
    stopping = true;
    if (child!.exitCode === null) child!.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    path,
    async stop() {
      stopping = true;
      if (child.exitCode === null && child.signalCode === null) {
        const exited = once(child, 'exit');
        child.kill('SIGTERM');
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Resolves once the server answers PING on its socket; rejects past the deadline or if it exits. */
async function answersPing(path: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + READY_DEADLINE_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with code ${child.exitCode} at start`);
    if (await redisAnswersPing({ path })) return;
    await delay(20);
  }
  throw new Error(`redis-server did not answer on ${path} within ${READY_DEADLINE_MS / 1000} s`);
}

/** Whether a Redis at `to` (a Unix socket path, or a host and port) answers PING now. */
export async function redisAnswersPing(to: NetConnectOpts): Promise<boolean> {
  const socket = connect(to);
  socket.on('error', () => {});
  try {
    await once(socket, 'connect');
    socket.write('PING\r\n');
    const [data] = (await once(socket, 'data')) as [Buffer];
    return data.toString().startsWith('+PONG');
  } catch {
    return false;
  } finally {
    socket.destroy();
  }
}
