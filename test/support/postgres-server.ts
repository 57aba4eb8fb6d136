/**
 * @module test/support/postgres-server
 * A private PostgreSQL server for one test file or one benchmark run: `initdb` into a temporary
 * folder, `postgres` on a free port of 127.0.0.1 (and a socket in that folder only), nothing shared
 * with the machine's own. PostgreSQL refuses to run as root, so as root it runs as the `postgres`
 * user, which owns the folder. `stop()` and `start()` take it away and bring it back on the same
 * port with the same data (an outage); `remove()` stops it and deletes the folder. No test runner
 * here: a benchmark starts its server with it too.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { accessSync, chownSync, constants, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from './cluster/redis-server.ts';
import { waitFor } from './wait-for.ts';

/** Where Debian's `postgresql` package puts each version's server binaries (`<version>/bin`). */
const DEBIAN_POSTGRESQL = '/usr/lib/postgresql';

export interface PostgresServer {
  /** What `--history` takes: `postgres://postgres@127.0.0.1:<port>/postgres`. */
  readonly url: string;
  readonly port: number;
  /** Stops the server (a fast shutdown), keeping its data. */
  stop(): Promise<void>;
  /** Starts a stopped server again on its port, with its data. */
  start(): Promise<void>;
  /** Stops it and deletes its folder. */
  remove(): Promise<void>;
}

/** The folder holding `initdb` and `postgres`; undefined when PostgreSQL is not installed. */
export function findPostgresBin(): string | undefined {
  let versions: string[];
  try {
    versions = readdirSync(DEBIAN_POSTGRESQL);
  } catch {
    return undefined;
  }
  // The newest version installed first.
  for (const version of versions.sort((a, b) => Number(b) - Number(a))) {
    const dir = path.join(DEBIAN_POSTGRESQL, version, 'bin');
    try {
      accessSync(path.join(dir, 'postgres'), constants.X_OK);
      accessSync(path.join(dir, 'initdb'), constants.X_OK);
      return dir;
    } catch {
      // not this version
    }
  }
  return undefined;
}

/** Whether tests needing PostgreSQL run here; says what to install when they cannot (an error in CI). */
export function postgresAvailable(): boolean {
  if (findPostgresBin() !== undefined) return true;
  if (process.env.CI) throw new Error('PostgreSQL is required in CI (.ci/run installs it)');
  console.warn('skipping PostgreSQL tests: install PostgreSQL (apt-get install postgresql)');
  return false;
}

/** As root the server runs as `postgres`; otherwise as whoever runs the tests. */
function serverUser(): { uid: number; gid: number } | undefined {
  if (userInfo().uid !== 0) return undefined;
  const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
  return { uid, gid };
}

export async function startPostgres(): Promise<PostgresServer> {
  const bin = findPostgresBin();
  if (bin === undefined) throw new Error('PostgreSQL is not installed (apt-get install postgresql)');
  const user = serverUser();
  const folder = mkdtempSync(path.join(tmpdir(), 'market-relay-pg-'));
  if (user !== undefined) chownSync(folder, user.uid, user.gid);
  const data = path.join(folder, 'data');
  execFileSync(
    path.join(bin, 'initdb'),
    ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync', '--no-instructions'],
    { stdio: 'ignore', ...user },
  );
  const port = await freePort();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let child: ChildProcess | undefined;

  const start = async (): Promise<void> => {
    const started = spawn(
      path.join(bin, 'postgres'),
      [
        ...['-D', data, '-p', String(port), '-k', folder, '-c', 'listen_addresses=127.0.0.1'],
        // A test's data is thrown away: nothing is synced to disk.
        ...['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'],
      ],
      { stdio: 'ignore', ...user },
    );
    child = started;
    await waitFor(
      `PostgreSQL on port ${port}`,
      async () => {
        if (started.exitCode !== null) throw new Error(`postgres exited with ${started.exitCode}`);
        return answers(url);
      },
      { timeoutMs: 20_000, everyMs: 50 },
    );
  };

  const stop = async (): Promise<void> => {
    const running = child;
    child = undefined;
    if (running === undefined || running.exitCode !== null || running.signalCode !== null) return;
    const exited = once(running, 'exit');
    running.kill('SIGINT'); // a fast shutdown: clients are disconnected, nothing waits for them
    await exited;
  };

  await start();
  return {
    url,
    port,
    stop,
    start,
    async remove() {
      await stop();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

async function answers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A new empty database on `server` for one test, and its URL: tests of one file share the server, not the tables. */
export async function freshDatabase(server: PostgresServer, name: string): Promise<string> {
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  return server.url.replace(/\/postgres$/, `/${name}`);
}
