/**
 * @module relay-server
 * The composition root of `market-relay serve`: upstream client (and the embedded simulator when
 * `--upstream sim`), stream registry, poller pool, the WebSocket endpoint and the HTTP surface,
 * wired once. Data flows one way: upstream -> poller -> streams -> connections.
 */
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import pino, { type Logger } from 'pino';
import { LocalCoordinator, type PollCoordinator } from './cluster/coordinator.ts';
import { RedisCoordinator } from './cluster/redis-coordinator.ts';
import { DEFAULT_MAX_AGE_MS, type ServeConfig } from './config.ts';
import { registerHealth } from './http/health.ts';
import { registerOperations } from './http/operations.ts';
import type { HealthSources } from './observability/health-report.ts';
import { Admission, defaultIsolationLimits } from './relay/admission.ts';
import { RelayEvents } from './relay/events.ts';
import { KnownMarkets } from './relay/known-markets.ts';
import { PollerPool } from './relay/poller-pool.ts';
import { StreamRegistry } from './relay/registry.ts';
import { UpstreamHealthMonitor } from './relay/upstream-health.ts';
import { type SimulatorHandle, startSimulator } from './sim/server.ts';
import { UpstreamClient } from './upstream/client.ts';
import type { ConnectionLimits } from './ws/client-connection.ts';
import { registerWsEndpoint, type WsEndpoint } from './ws/endpoint.ts';

/** Relay internals with defaults; not on the command line, but tests and benchmarks set them. */
export interface RelayTuning {
  heartbeatMs: number;
  /** How long a stream nobody subscribes to is still polled, so a reconnect finds it (and can resume). */
  lingerMs: number;
  /** Updates each stream keeps for resume. */
  resumeBufferSize: number;
  /** A stream is stale after this many poll intervals without a successful poll. */
  staleAfterFactor: number;
  maxConnections: number;
  maxFrameBytes: number;
  upstreamTimeoutMs: number;
  upstreamRetries: number;
  /** A market the status page shows as unreachable upstream after this long without any success. */
  upstreamDownAfterMs: number;
  connection: ConnectionLimits;
  /** Simulator tick for the embedded simulator (ms; 0 = manual). */
  simTickMs: number;
}

export const defaultTuning: RelayTuning = {
  heartbeatMs: 15_000,
  lingerMs: 5_000,
  resumeBufferSize: 1_000,
  staleAfterFactor: 3,
  maxConnections: 10_000,
  maxFrameBytes: 64 * 1024,
  upstreamTimeoutMs: 5_000,
  upstreamRetries: 2,
  upstreamDownAfterMs: 10_000,
  connection: {
    maxStreams: 1_000,
    requestsPerSecond: 20,
    requestBurst: 40,
    highWaterBytes: 1024 * 1024,
    maxBufferBytes: 8 * 1024 * 1024,
    slowConsumerTimeoutMs: 10_000,
  },
  simTickMs: 250,
};

/** Upstream `GET /health` is probed this often while no other request succeeds. */
const UPSTREAM_PROBE_MS = 5_000;

export type RelayConfig = ServeConfig & {
  tuning?: Partial<Omit<RelayTuning, 'connection'>> & { connection?: Partial<ConnectionLimits> };
};

export interface Relay {
  /** http://host:port of the relay (the real port when 0 was asked for). */
  readonly url: string;
  readonly upstreamUrl: string;
  readonly events: RelayEvents;
  readonly registry: StreamRegistry;
  readonly poller: PollerPool;
  /** Upstream's market catalogue as the relay last read it (judges unknown ids). */
  readonly knownMarkets: KnownMarkets;
  /** Who polls what: this relay alone, or the lease holders of a Redis cluster. */
  readonly coordinator: PollCoordinator;
  readonly client: UpstreamClient;
  readonly upstreamHealth: UpstreamHealthMonitor;
  readonly ws: WsEndpoint;
  readonly app: FastifyInstance;
  readonly logger: Logger;
  /** The embedded simulator when started with `--upstream sim`. */
  readonly sim: SimulatorHandle | undefined;
  readonly startedAt: number;
  readonly tuning: RelayTuning;
  close(): Promise<void>;
}

export async function startRelay(
  config: RelayConfig,
  logger: Logger = pino({ level: config.logLevel }),
): Promise<Relay> {
  const tuning: RelayTuning = {
    ...defaultTuning,
    ...config.tuning,
    connection: { ...defaultTuning.connection, ...config.tuning?.connection },
  };
  const startedAt = Date.now();
  const sim =
    config.upstream === 'sim'
      ? await startSimulator({ markets: config.simMarkets, seed: config.simSeed, tickMs: tuning.simTickMs })
      : undefined;
  const upstreamUrl = sim?.url ?? config.upstream;
  const client = new UpstreamClient({
    baseUrl: upstreamUrl,
    timeoutMs: tuning.upstreamTimeoutMs,
    retries: tuning.upstreamRetries,
    concurrency: config.upstreamConcurrency,
    rps: config.upstreamRps,
  });

  const events = new RelayEvents();
  let poller: PollerPool | undefined;
  const registry = new StreamRegistry({
    lingerMs: tuning.lingerMs,
    resumeBufferSize: tuning.resumeBufferSize,
    onInterestChange: () => poller?.sync(),
  });
  const coordinator = await startCoordinator(config.redis, logger);
  poller = new PollerPool({
    source: client,
    coordinator,
    registry,
    events,
    bookPollMs: config.bookPollMs,
    pricePollMs: config.pricePollMs,
    upstreamRps: config.upstreamRps,
    concurrency: config.upstreamConcurrency,
    scheduler: config.scheduler ?? 'freshness',
    maxAgeMs: config.maxAgeMs ?? Math.max(DEFAULT_MAX_AGE_MS, config.bookPollMs),
    staleAfterFactor: tuning.staleAfterFactor,
  });

  const httpLogger: FastifyBaseLogger = logger.child({ component: 'http' });
  // No log line per HTTP request: logs are for notable events (issue 6).
  const app = Fastify({
    loggerInstance: httpLogger,
    logController: new LogController({ disableRequestLogging: true }),
    // A keep-alive connection that never sends a request (a browser's spare one) must not hold
    // shutdown past its 5 s; this applies after the preClose hook has closed WebSockets with 1001.
    forceCloseConnections: true,
  });
  const knownMarkets = new KnownMarkets(client);
  const admission = new Admission({
    registry,
    catalogue: knownMarkets,
    limits: config.isolation ?? defaultIsolationLimits,
  });
  const ws = registerWsEndpoint(app, {
    registry,
    admission,
    events,
    limits: tuning.connection,
    heartbeatMs: tuning.heartbeatMs,
    maxConnections: tuning.maxConnections,
    maxFrameBytes: tuning.maxFrameBytes,
    ...(config.apiKeys === undefined ? {} : { apiKeys: config.apiKeys }),
    ...(config.allowedOrigins === undefined ? {} : { allowedOrigins: config.allowedOrigins }),
  });
  const relayPoller = poller;
  const upstreamHealth = new UpstreamHealthMonitor(client);
  let shuttingDown = false;
  const healthSources: HealthSources = {
    poller: relayPoller,
    coordinator,
    registry,
    ws,
    upstream: upstreamHealth,
    upstreamUrl,
    startedAt,
    upstreamDownAfterMs: tuning.upstreamDownAfterMs,
    isShuttingDown: () => shuttingDown,
  };
  registerHealth(app, healthSources);
  registerOperations(app, {
    ...healthSources,
    events,
    client,
    logger,
    bookPollMs: config.bookPollMs,
    pricePollMs: config.pricePollMs,
  });
  await upstreamHealth.start(UPSTREAM_PROBE_MS);
  knownMarkets.start();

  /** Everything started above, released in dependency order: by `close()`, or when `listen` fails. */
  const release = async (): Promise<void> => {
    relayPoller.stop();
    knownMarkets.stop();
    upstreamHealth.stop();
    await coordinator.close();
    await app.close();
    registry.clear();
    await client.close();
    await sim?.close();
  };

  let address: string;
  try {
    address = await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    await release();
    throw error;
  }
  const url = address.replace('[::1]', 'localhost');

  let closing: Promise<void> | undefined;
  return {
    url,
    upstreamUrl,
    events,
    registry,
    poller: relayPoller,
    knownMarkets,
    coordinator,
    client,
    upstreamHealth,
    ws,
    app,
    logger,
    sim,
    startedAt,
    tuning,
    close() {
      closing ??= (async () => {
        shuttingDown = true;
        await release();
      })();
      return closing;
    },
  };
}

/** Waiting longer than this for Redis at start would only delay serving: the relay polls itself meanwhile. */
const REDIS_CONNECT_MS = 2_000;

async function startCoordinator(redisUrl: string | undefined, logger: Logger): Promise<PollCoordinator> {
  if (redisUrl === undefined) return new LocalCoordinator();
  const log = logger.child({ component: 'cluster' });
  let lastLogged: string | undefined;
  const coordinator = new RedisCoordinator({
    url: redisUrl,
    // One line per distinct failure, not one per failed command.
    onError: (error) => {
      if (error.message === lastLogged) return;
      lastLogged = error.message;
      log.warn(
        { event: 'redis_error', err: error.message },
        'redis unavailable: polling without coordination',
      );
    },
  });
  const connected = await coordinator.connect(REDIS_CONNECT_MS);
  log.info(
    { event: connected ? 'cluster_joined' : 'cluster_degraded', instance: coordinator.instanceId },
    connected
      ? 'cluster mode: leases and shared results over redis'
      : 'cluster mode: redis not reachable yet',
  );
  return coordinator;
}
