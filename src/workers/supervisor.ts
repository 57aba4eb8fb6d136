/**
 * @module workers/supervisor
 * The primary process of `market-relay serve --workers N` (docs/operations.md "Every core of a
 * machine"). It serves nothing itself: `node:cluster` hands each connection on the shared port to a
 * worker, and every worker is a whole relay in cluster mode. The primary starts what the workers
 * must share (a private Redis unless `--redis` is given, and the embedded simulator when
 * `--upstream sim`: one upstream, or resumes across workers would meet other data), forks the
 * workers, restarts one that dies, and on `close()` stops them (each drains as a relay does on
 * SIGTERM), then Redis and the simulator.
 */
import cluster, { type Worker } from 'node:cluster';
import { once } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { ServeConfig } from '../config/config.ts';
import { resolveTuning } from '../config/tuning.ts';
import { type SimulatorHandle, startSimulator } from '../sim/server.ts';
import { type PrivateRedis, startPrivateRedis } from './private-redis.ts';
import { ASSIGNMENT_ENV, type Assignment, isListeningMessage, type ListeningMessage } from './worker.ts';

/** After their drain window, the workers have this long to stop (the program's own deadline is 5 s). */
const STOP_DEADLINE_MS = 4_500;
/** A worker that died is replaced this much later, so one that cannot start does not spin. */
const RESTART_DELAY_MS = 1_000;

export interface Supervisor {
  /** Where the workers listen: the one public address they share. */
  readonly url: string;
  /** Each worker's operator endpoints when they have their own port (`--operator-port`), by index. */
  readonly operatorUrls: readonly (string | undefined)[];
  /** The private Redis's socket; undefined when the workers use the given `--redis`. */
  readonly redisSocket: string | undefined;
  readonly sim: SimulatorHandle | undefined;
  /** Each worker's drain window on SIGTERM (`--drain-ms`), within which its clients leave. */
  readonly drainMs: number;
  close(): Promise<void>;
}

export async function superviseWorkers(config: ServeConfig, logger: Logger): Promise<Supervisor> {
  const count = config.workers ?? 1;
  const { operatorPort } = config;
  if (operatorPort !== undefined && operatorPort !== 0 && operatorPort + count - 1 > 65_535) {
    throw new Error(
      `--operator-port ${operatorPort} leaves no port for each of ${count} workers (P to P+${count - 1})`,
    );
  }
  const log = logger.child({ component: 'workers' });
  const { drainMs } = resolveTuning(config.tuning);
  const stopDeadlineMs = drainMs + STOP_DEADLINE_MS;
  const live = new Map<number, Worker>();
  let stopping = false;
  let redis: PrivateRedis | undefined;
  let sim: SimulatorHandle | undefined;

  const stopWorkers = async (): Promise<void> => {
    const running = [...live.values()].filter((worker) => !worker.isDead());
    const exits = running.map((worker) => once(worker, 'exit'));
    for (const worker of running) worker.process.kill('SIGTERM');
    const deadline = delay(stopDeadlineMs).then(() => 'late' as const);
    if ((await Promise.race([Promise.all(exits), deadline])) === 'late') {
      for (const worker of running) if (!worker.isDead()) worker.process.kill('SIGKILL');
      throw new Error(`workers still running ${stopDeadlineMs / 1000} s after SIGTERM were killed`);
    }
  };
  const release = async (): Promise<void> => {
    stopping = true;
    try {
      await stopWorkers();
    } finally {
      await redis?.stop();
      await sim?.close();
    }
  };

  /** Forks the worker of `index`; resolves once it listens, rejects if it exits before. */
  const fork = (assignment: Assignment): Promise<ListeningMessage> => {
    const worker = cluster.fork({ [ASSIGNMENT_ENV]: JSON.stringify(assignment) });
    live.set(assignment.index, worker);
    return new Promise((resolve, reject) => {
      let listening = false;
      worker.on('message', (message: unknown) => {
        if (!isListeningMessage(message) || listening) return;
        listening = true;
        resolve(message);
      });
      worker.on('exit', (code, signal) => {
        if (live.get(assignment.index) === worker) live.delete(assignment.index);
        if (!listening) {
          reject(
            new Error(
              `worker ${assignment.index + 1} exited (${signal ?? `code ${code}`}) before it listened`,
            ),
          );
          return;
        }
        if (stopping) return;
        log.error(
          { event: 'worker_exited', worker: assignment.index + 1, code, signal },
          `worker ${assignment.index + 1} exited; starting another in its place`,
        );
        void replace(assignment);
      });
    });
  };
  const replace = async (assignment: Assignment): Promise<void> => {
    await delay(RESTART_DELAY_MS);
    if (stopping) return;
    try {
      const { url } = await fork(assignment);
      log.info(
        { event: 'worker_restarted', worker: assignment.index + 1 },
        `worker ${assignment.index + 1} listens on ${url} again`,
      );
    } catch (error) {
      if (stopping) return;
      log.error(
        { event: 'worker_restart_failed', worker: assignment.index + 1, err: String(error) },
        'worker restart failed; trying again',
      );
      void replace(assignment);
    }
  };

  try {
    if (config.redis === undefined) {
      redis = await startPrivateRedis({
        exited: (code, signal) =>
          log.error(
            { event: 'private_redis_exited', code, signal },
            "the workers' redis-server exited; restarting it (workers poll for themselves meanwhile)",
          ),
      });
    }
    if (config.upstream === 'sim') {
      sim = await startSimulator({
        markets: config.simMarkets,
        seed: config.simSeed,
        tickMs: resolveTuning(config.tuning).simTickMs,
        ...(config.simProfile === undefined ? {} : { profile: config.simProfile }),
      });
    }
    const redisSpec = config.redis ?? redis!.path;
    const upstream = sim?.url ?? config.upstream;
    const listening = await Promise.all(
      Array.from({ length: count }, (_, index) => fork({ index, redis: redisSpec, upstream })),
    );
    log.info(
      { event: 'workers_listening', workers: count },
      `${count} workers listening on ${listening[0]!.url}`,
    );
    let closing: Promise<void> | undefined;
    return {
      url: listening[0]!.url,
      operatorUrls: listening.map((worker) => worker.operatorUrl),
      redisSocket: redis?.path,
      sim,
      drainMs,
      close() {
        closing ??= release();
        return closing;
      },
    };
  } catch (error) {
    await release().catch(() => undefined);
    throw error;
  }
}
