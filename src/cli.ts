/**
 * @module cli
 * `market-relay [serve|sim|help] [--flags]` (docs/operations.md): parse and validate the
 * configuration (a bad value is one line naming the option and exit code 2), start, print where it
 * listens (on stderr, whatever the log level), and shut down cleanly on SIGTERM / SIGINT: a relay
 * drains (src/drain.ts, also on `POST /drain`) and exits 0 within `--drain-ms` + 5 s.
 * With `--workers N` this process is the primary of N relay processes (src/workers/), or one of them.
 */
import cluster from 'node:cluster';
import { type Command, ConfigError, parseCommandLine } from './config/config.ts';
import { helpText, versionText } from './config/help.ts';

/** After the drain window (none for `sim`), what releasing everything may take before exit 1. */
const SHUTDOWN_DEADLINE_MS = 5_000;

async function main(): Promise<void> {
  let command: Command;
  try {
    command = parseCommandLine(process.argv.slice(2), process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`market-relay: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  if (command.command === 'help') {
    process.stdout.write(helpText(command.topic));
    return;
  }
  if (command.command === 'version') {
    process.stdout.write(versionText());
    return;
  }

  // What runs is loaded only to run it: help, the version and a bad option answer without loading
  // the server, and `sim` without the relay, in a fraction of the time.
  const { createLogger } = await import('./observability/log-sink.ts');
  // A reader of stderr that went away must not crash us either (stdout is the log sink's).
  process.stderr.on('error', () => {});
  const { logger, sink } = createLogger(command.config.logLevel);
  let close: () => Promise<void>;
  /** How long `close` may take in all before the program gives up and exits 1. */
  let deadlineMs = SHUTDOWN_DEADLINE_MS;
  /** Set by a relay: a drain it started itself (`POST /drain`) ends the program as SIGTERM does. */
  let onDrainRequested: ((stop: () => void) => void) | undefined;
  if (command.command === 'sim') {
    const { startSimulator } = await import('./sim/server.ts');
    const { port, host, markets, seed, profile, tickMs } = command.config;
    const sim = await startSimulator({ port, host, markets, seed, profile, tickMs });
    logger.info({ markets, seed, profile }, `simulator listening on ${sim.url}`);
    process.stderr.write(`market-relay sim listening on ${sim.url}\n`);
    close = () => sim.close();
  } else if ((command.config.workers ?? 1) > 1 && cluster.isPrimary) {
    const { superviseWorkers } = await import('./workers/supervisor.ts');
    const workers = await superviseWorkers(command.config, logger);
    const redis =
      workers.redisSocket === undefined
        ? 'the given --redis'
        : `a redis-server of their own (${workers.redisSocket})`;
    process.stderr.write(`market-relay: ${command.config.workers} workers, coordinating over ${redis}\n`);
    workers.operatorUrls.forEach((url, index) => {
      if (url !== undefined) process.stderr.write(`worker ${index + 1} operator endpoints: ${url}\n`);
    });
    if (workers.sim !== undefined) {
      process.stderr.write(
        `embedded simulator: ${workers.sim.url} (its admin API: ${workers.sim.url}/_sim)\n`,
      );
    }
    process.stderr.write(`market-relay listening on ${workers.url}\n`);
    close = () => workers.close();
    deadlineMs += workers.drainMs;
  } else {
    const [{ startRelay }, { printQuickStart }, { workerConfig }] = await Promise.all([
      import('./relay-server.ts'),
      import('./http/quick-start.ts'),
      import('./workers/worker.ts'),
    ]);
    // A worker of `--workers`: the primary prints the ready line once every worker listens.
    const worker = cluster.isWorker ? workerConfig(command.config, process.env) : undefined;
    const config = worker?.config ?? command.config;
    const relay = await startRelay(
      config,
      worker === undefined ? logger : logger.child({ worker: worker.index + 1 }),
      sink,
    );
    logger.info(
      { upstream: config.upstream === 'sim' ? `sim (${relay.upstreamUrl})` : relay.upstreamUrl },
      `market-relay listening on ${relay.url}`,
    );
    if (worker === undefined) {
      // The ready line scripts and supervisors wait for: a plain line, printed at every log level.
      process.stderr.write(`market-relay listening on ${relay.url}\n`);
      if (relay.sim !== undefined) {
        process.stderr.write(`embedded simulator: ${relay.sim.url} (its admin API: ${relay.sim.url}/_sim)\n`);
      }
    } else {
      process.send?.({ type: 'listening', url: relay.url, operatorUrl: relay.operatorUrl });
    }
    const quickStart = new AbortController();
    // One worker prints the newcomer's quick start for all of them.
    if (worker === undefined || worker.index === 0) {
      void printQuickStart(
        { ...relay, apiKeys: config.apiKeys },
        { write: (text) => process.stderr.write(text), signal: quickStart.signal },
      );
    }
    close = () => {
      quickStart.abort();
      return relay.drain();
    };
    deadlineMs += relay.tuning.drainMs;
    onDrainRequested = (stop) => relay.events.once('relay:draining', stop);
  }

  let stopping = false;
  const stop = (signal: NodeJS.Signals | 'POST /drain') => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    setTimeout(() => {
      logger.error(`shutdown took longer than ${deadlineMs / 1000} s; exiting anyway`);
      process.exit(1);
    }, deadlineMs).unref();
    close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  onDrainRequested?.(() => stop('POST /drain'));
}

main().catch((error: unknown) => {
  process.stderr.write(`market-relay: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
