/**
 * @module relay-server
 * The composition root of `market-relay serve`: upstream client (and the embedded simulator when
 * `--upstream sim`), stream registry, poller pool, the client endpoints (WebSocket and SSE, wired
 * in client-endpoints.ts) and the HTTP surface, wired once. Data flows one way: upstream -> poller
 * -> streams -> connections.
 */
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { registerClientEndpoints } from './client-endpoints.ts';
import type { ServeConfig } from './config/config.ts';
import { DEFAULT_MAX_AGE_MS } from './config/poll-options.ts';
import { type RelayTuning, resolveTuning } from './config/tuning.ts';
import { drainConnections, leavingConnections } from './drain.ts';
import type { RecordReader } from './history/recorder.ts';
import { leasedRecording, startHistoryRecording } from './history-recording.ts';
import { registerCors } from './http/cors.ts';
import { registerHealth } from './http/health.ts';
import { registerHistoryExport } from './http/history-export.ts';
import { type Operations, registerOperations } from './http/operations.ts';
import { createRelayApp } from './http/relay-app.ts';
import { registerRestFront } from './http/rest-front/index.ts';
import type { HealthSources } from './observability/health-report.ts';
import { createLogger, type LogSink } from './observability/log-sink.ts';
import { pollTargets } from './poll-targets.ts';
import type { AccessPolicy } from './relay/admission/access.ts';
import { KnownMarkets } from './relay/admission/known-markets.ts';
import { defaultIsolationLimits, MarketAdmission } from './relay/admission/market.ts';
import type { Broker } from './relay/coordination/broker.ts';
import { startBroker } from './relay/coordination/start.ts';
import { RelayEvents } from './relay/events.ts';
import { NotFoundJudge } from './relay/poll/not-found.ts';
import { PollerPool } from './relay/poll/poller-pool.ts';
import { UpstreamHealthMonitor } from './relay/poll/upstream-health.ts';
import { RecordingHolds } from './relay/session/recording-holds.ts';
import { ReplayService } from './relay/session/replay/replays.ts';
import { SinceReads } from './relay/session/since-reads.ts';
import { ConfirmationAnnouncer, StreamPublisher } from './relay/streams/publisher.ts';
import { StreamRegistry } from './relay/streams/registry.ts';
import { brokerOptions, logUpstreamIdentity, tracingAsked } from './relay-setup.ts';
import { type SimulatorHandle, startSimulator } from './sim/server.ts';
import type { SseEndpoint } from './sse/endpoint.ts';
import { UpstreamClient } from './upstream/client.ts';
import type { WsEndpoint } from './ws/endpoint.ts';

/** Upstream `GET /health` is probed this often while no other request succeeds. */
const UPSTREAM_PROBE_MS = 5_000;
/** How long one page of a `since` history read waits for its slot of the upstream budget. */
const SINCE_SLOT_WAIT_MS = 10_000;

export type RelayConfig = ServeConfig;

export interface Relay {
  /** http://host:port of the relay (the real port when 0 was asked for). */
  readonly url: string;
  /** http://host:port of the operator endpoints when they have their own port (`--operator-port`). */
  readonly operatorUrl: string | undefined;
  readonly operations: Operations;
  readonly upstreamUrl: string;
  readonly events: RelayEvents;
  readonly registry: StreamRegistry;
  readonly poller: PollerPool;
  /** Upstream's market catalogue as the relay last read it (judges unknown ids). */
  readonly knownMarkets: KnownMarkets;
  /** The history reads of subscriptions with `since` (channels that serve history). */
  readonly sinceReads: SinceReads;
  /** The replays of the record running on every connection. */
  readonly replays: ReplayService;
  /** Leases, numbering, history and the upstream budget: this relay alone, or a Redis cluster's. */
  readonly broker: Broker;
  readonly client: UpstreamClient;
  readonly upstreamHealth: UpstreamHealthMonitor;
  readonly ws: WsEndpoint;
  readonly sse: SseEndpoint;
  readonly app: FastifyInstance;
  readonly logger: Logger;
  /** The embedded simulator when started with `--upstream sim`. */
  readonly sim: SimulatorHandle | undefined;
  readonly startedAt: number;
  readonly tuning: RelayTuning;
  /**
   * Drains (src/drain.ts: `/readyz` 503 at once, newcomers refused, every connection told
   * `going_away` and closed, spread over `drainMs`), then closes; the same promise on every call.
   * SIGTERM and `POST /drain` call it; `events` tells `relay:draining` when it starts.
   */
  drain(): Promise<void>;
  /** Closes at once: every connection with 1001, leases released. */
  /** The record of what it sends (docs/history.md); undefined with `--history off`. */
  readonly history: RecordReader | undefined;
  close(): Promise<void>;
}

/** `logSink`: where `logger` writes, when it counts lines it had to drop (for the metrics). */
export async function startRelay(
  config: RelayConfig,
  givenLogger?: Logger,
  givenSink?: LogSink,
): Promise<Relay> {
  const { logger, sink: logSink } =
    givenLogger === undefined ? createLogger(config.logLevel) : { logger: givenLogger, sink: givenSink };
  const tuning = resolveTuning(config.tuning);
  const startedAt = Date.now();
  // First: a store that cannot be opened stops the start before anything else is running.
  const history = await startHistoryRecording(config.history, config.redis !== undefined, logger);
  const sim =
    config.upstream === 'sim'
      ? await startSimulator({
          markets: config.simMarkets,
          seed: config.simSeed,
          tickMs: tuning.simTickMs,
          ...(config.simProfile === undefined ? {} : { profile: config.simProfile }),
        })
      : undefined;
  const upstreamUrl = sim?.url ?? config.upstream;
  const tracing = await tracingAsked(config, logger);
  const broker = await startBroker({
    ...brokerOptions(config, tuning, logger),
    recordNumbered: history?.numbered,
  });
  const client = new UpstreamClient({
    baseUrl: upstreamUrl,
    timeoutMs: tuning.upstreamTimeoutMs,
    retries: tuning.upstreamRetries,
    concurrency: config.upstreamConcurrency,
    rps: config.upstreamRps,
    rateGate: broker.rateGate(config.upstreamRps),
  });

  const events = new RelayEvents();
  const registry = new StreamRegistry({
    lingerMs: tuning.lingerMs,
    resumeBufferSize: tuning.resumeBufferSize,
    resumeBufferBytes: tuning.resumeBufferBytes,
    resumeBufferMs: tuning.historyMs,
    resumeHistory: broker.history,
    // What a paced group sent counts in the same events as what every change sends.
    onPacedSend: (stream, frame, recipients) => pacedSends.pacedSent(stream, frame, recipients),
  });
  const pacedSends = new StreamPublisher(events, Date.now);
  // In a cluster sharing the store, a stream numbered here is recorded by its recording lease's holder.
  const leased = leasedRecording(
    history,
    broker.recordingLeases,
    (stream) => registry.get(stream) === stream,
  );
  const served = history?.served ?? leased?.sink;
  const upstreamHealth = new UpstreamHealthMonitor(client, {
    onIdentity: (identity) => logUpstreamIdentity(logger, upstreamUrl, identity),
  });
  const knownMarkets = new KnownMarkets(client);
  // Wires itself to the registry: each change of interest is one step down to it.
  const poller = new PollerPool({
    // A poll is never retried within itself: its next poll is its retry.
    source: client.singleAttempt(),
    broker,
    targets: pollTargets,
    registry,
    events,
    ...(served === undefined ? {} : { record: served }),
    bookPollMs: config.bookPollMs,
    pricePollMs: config.pricePollMs,
    upstreamRps: config.upstreamRps,
    concurrency: config.upstreamConcurrency,
    scheduler: config.scheduler ?? 'freshness',
    maxAgeMs: config.maxAgeMs ?? Math.max(DEFAULT_MAX_AGE_MS, config.bookPollMs),
    staleAfterFactor: tuning.staleAfterFactor,
    existence: new NotFoundJudge(upstreamHealth, knownMarkets),
    requestTimeoutMs: tuning.upstreamTimeoutMs,
    // The REST front's upstream requests (docs/operations.md "REST front").
    oneOffs: { share: tuning.restBudgetPercent / 100, maxWaiting: tuning.restQueue },
    // Called only once subscriptions exist, after the admission below is made.
    shareOwner: (subscriber) => marketAdmission.shareOwner(subscriber),
    tracing: tracing?.tracing,
  });

  // Every 429, a poll's or not, lowers the budget's rate (docs/scheduler.md "Rate limits").
  upstreamHealth.followRateLimits(poller.rateLimited);

  const httpLogger: FastifyBaseLogger = logger.child({ component: 'http' });
  // No log line per HTTP request: logs are for notable events (issue 6).
  const createApp = () => createRelayApp(httpLogger);
  const app = createApp();
  // The operator endpoints' own app when they are kept off the public port.
  const operatorApp = config.operatorPort === undefined ? app : createApp();
  const access: AccessPolicy = {
    ...(config.apiKeys === undefined ? {} : { apiKeys: config.apiKeys }),
    ...(config.allowedOrigins === undefined ? {} : { allowedOrigins: config.allowedOrigins }),
  };
  // Browsers on other origins may read the public paths (docs/operations.md "CORS").
  registerCors(app, access);
  const marketAdmission = new MarketAdmission({
    registry,
    catalogue: knownMarkets,
    limits: config.isolation ?? defaultIsolationLimits,
  });
  // History reads for `since` (docs/protocol.md "History since a time"), each page in a slot of
  // the budget like the REST front's requests.
  const sinceReads = new SinceReads({
    upstream: client,
    budget: poller,
    slotWaitMs: SINCE_SLOT_WAIT_MS,
    position: (channel, market) => registry.get({ channel, market, depth: undefined }),
    record: history?.recorder,
  });
  // `replay` of the record (docs/protocol.md "Replay"): refused with `--history off`.
  const replays = new ReplayService({
    recorder: history?.recorder,
    highWaterBytes: tuning.connection.highWaterBytes,
  });
  const { ws, sse, edgeAdmission, stopPruning } = registerClientEndpoints(app, {
    registry,
    marketAdmission,
    events,
    tuning,
    compression: config.compression ?? true,
    access,
    sinceReads,
    replays,
  });
  let shuttingDown = false;
  const healthSources: HealthSources = {
    poller,
    broker,
    registry,
    ws,
    upstream: upstreamHealth,
    upstreamUrl,
    startedAt,
    upstreamDownAfterMs: tuning.upstreamDownAfterMs,
    isShuttingDown: () => shuttingDown,
    history: history?.recorder,
  };
  // The operator's full view is the status page's; the public answer leaves out hosts and paths.
  registerHealth(app, {
    ...healthSources,
    redacted: config.operatorPort !== undefined || config.operatorKey !== undefined,
  });
  const operations = registerOperations(
    operatorApp,
    {
      ...healthSources,
      events,
      client,
      logger,
      replays,
      ...(logSink === undefined ? {} : { logSink }),
      bookPollMs: config.bookPollMs,
      pricePollMs: config.pricePollMs,
    },
    {
      operatorKey:
        config.operatorKey === undefined
          ? undefined
          : {
              key: config.operatorKey,
              admission: edgeAdmission,
              trustedProxyDepth: tuning.edge.trustedProxyDepth,
            },
      statusFeed: tuning.statusFeed,
      drain: {
        start: () => {
          void relay.drain();
          return { drainMs: tuning.drainMs, connections: drainingConnections };
        },
        guarded: config.operatorPort !== undefined || config.operatorKey !== undefined,
      },
    },
  );
  // The status page's book view connects to the WebSocket (or, with ?transport=sse, the SSE
  // endpoint) of the origin it was served from.
  if (operatorApp !== app) {
    ws.attach(operatorApp.server);
    sse.attach(operatorApp);
  }
  registerHistoryExport(app, { recorder: history?.recorder, access });
  registerRestFront(app, {
    client,
    budget: poller,
    registry,
    marketAdmission,
    cacheTtlMs: tuning.restCacheTtlMs,
    cacheCapacity: tuning.restCacheCapacity,
    firstStateTimeoutMs: tuning.upstreamTimeoutMs,
  });
  await upstreamHealth.start(UPSTREAM_PROBE_MS);
  knownMarkets.start();
  const confirmations = new ConfirmationAnnouncer(poller.publisher, tuning.confirmMs);
  confirmations.start();
  // `--record`: streams held with no client, so that they are recorded (docs/history.md).
  const recordingHolds =
    config.record === undefined || history === undefined
      ? undefined
      : new RecordingHolds(registry, config.record);
  if (config.record !== undefined && history === undefined)
    logger.warn({ event: 'record_without_history' }, '--record is ignored: --history is off');

  /** Everything started above, released in dependency order: by `close()`, or when `listen` fails. */
  const release = async (): Promise<void> => {
    stopPruning();
    confirmations.stop();
    recordingHolds?.close();
    poller.stop();
    // No replay may be reading the store when it closes.
    await replays.stopAll();
    await leased?.close();
    await history?.recorder.close();
    knownMarkets.stop();
    upstreamHealth.stop();
    await broker.close();
    await app.close();
    if (operatorApp !== app) await operatorApp.close();
    registry.clear();
    await client.close();
    await sim?.close();
    await tracing?.shutdown();
  };

  let address: string;
  let operatorAddress: string | undefined;
  try {
    address = await app.listen({ port: config.port, host: config.host });
    if (operatorApp !== app) {
      operatorAddress = await operatorApp.listen({
        port: config.operatorPort,
        host: config.operatorHost ?? config.host,
        // A worker of `--workers` has operator endpoints of its own, never shared with the others.
        exclusive: true,
      });
    }
  } catch (error) {
    await release();
    throw error;
  }
  const url = address.replace('[::1]', 'localhost');
  const operatorUrl = operatorAddress?.replace('[::1]', 'localhost');

  let closing: Promise<void> | undefined;
  let draining: Promise<void> | undefined;
  let drainingConnections = 0;
  const relay: Relay = {
    url,
    operatorUrl,
    operations,
    upstreamUrl,
    events,
    registry,
    poller,
    knownMarkets,
    sinceReads,
    replays,
    broker,
    client,
    upstreamHealth,
    ws,
    sse,
    app,
    logger,
    sim,
    startedAt,
    tuning,
    drain() {
      if (draining !== undefined) return draining;
      // From the first moment: /readyz (and /health) answer 503, so a load balancer sends no one.
      shuttingDown = true;
      drainingConnections = ws.connections.size + sse.connections.size;
      draining = drainConnections({
        drainMs: tuning.drainMs,
        stopAccepting: () => {
          ws.stopAccepting();
          sse.stopAccepting();
        },
        connections: () => leavingConnections(ws, sse),
      }).then(() => relay.close());
      // Told once the drain is under way: a listener that calls drain() again gets the same promise.
      events.emit('relay:draining', { drainMs: tuning.drainMs, connections: drainingConnections });
      logger.info(
        { event: 'drain_started', connections: drainingConnections, drainMs: tuning.drainMs },
        'draining: every connection told going_away, closes spread over drainMs',
      );
      return draining;
    },
    history: history?.recorder,
    close() {
      closing ??= (async () => {
        shuttingDown = true;
        await release();
      })();
      return closing;
    },
  };
  return relay;
}
