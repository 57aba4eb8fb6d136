/**
 * @module workers/worker
 * A worker's side of `--workers`: what the primary assigned it through its environment (the Redis
 * the workers share, the upstream, its index) applied to the configuration every worker parsed from
 * the same command line, and the message telling the primary where it listens.
 */
import path from 'node:path';
import type { ServeConfig } from '../config/config.ts';

/** The variable the primary hands a worker its assignment in. */
export const ASSIGNMENT_ENV = 'MARKET_RELAY_WORKER';

export interface Assignment {
  /** 0 for the first worker; a restarted worker keeps the index of the one it replaces. */
  index: number;
  redis: string;
  /** The upstream: `--upstream`, or the URL of the simulator the primary runs for every worker. */
  upstream: string;
}

export interface ListeningMessage {
  type: 'listening';
  url: string;
  operatorUrl: string | undefined;
}

export function isListeningMessage(message: unknown): message is ListeningMessage {
  return (
    typeof message === 'object' &&
    message !== null &&
    (message as { type?: unknown }).type === 'listening' &&
    typeof (message as { url?: unknown }).url === 'string'
  );
}

/**
 * This worker's configuration: the command line's, coordinated over the assigned Redis, polling the
 * assigned upstream, and with its operator endpoints on a port of its own (`--operator-port` + its
 * index), so that each worker's metrics can be scraped apart.
 */
export function workerConfig(
  config: ServeConfig,
  env: NodeJS.ProcessEnv,
): { config: ServeConfig; index: number } {
  const text = env[ASSIGNMENT_ENV];
  if (text === undefined) throw new Error(`a worker without ${ASSIGNMENT_ENV}`);
  const assignment = JSON.parse(text) as Assignment;
  const operatorPort =
    config.operatorPort === undefined || config.operatorPort === 0
      ? config.operatorPort
      : config.operatorPort + assignment.index;
  // One embedded history store per process (a DuckDB file has one writer): each worker records
  // what it serves into a folder of its own inside --data-dir (docs/history.md). A shared store's
  // URL is every worker's, as it is every relay's of a cluster.
  const history =
    config.history?.store !== 'embedded'
      ? config.history
      : { ...config.history, dataDir: path.join(config.history.dataDir, `worker-${assignment.index + 1}`) };
  return {
    index: assignment.index,
    config: { ...config, redis: assignment.redis, upstream: assignment.upstream, operatorPort, history },
  };
}
