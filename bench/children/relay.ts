/**
 * @module bench/children/relay
 * The relay under test in its own process (issue 5: the server's CPU is measured with
 * process.cpuUsage() inside the server process), against the simulator child's URL.
 */
import { type IntervalHistogram, monitorEventLoopDelay } from 'node:perf_hooks';
import pino from 'pino';
import { DuckDbHistoryStore } from '../../src/history/duckdb-store.ts';
import { startRelay } from '../../src/relay-server.ts';
import { benchHistoryConfig } from '../lib/history-config.ts';
import { serveIpc } from '../lib/ipc.ts';
import { memoryAfterGc, sampleUsage } from '../lib/usage.ts';

const pollMs = Number(process.env.BENCH_POLL_MS ?? 500);
const upstreamRps = Number(process.env.BENCH_UPSTREAM_RPS ?? 5_000);
const upstreamConcurrency = Number(process.env.BENCH_UPSTREAM_CONCURRENCY ?? 32);
const relay = await startRelay(
  {
    port: 0,
    host: '127.0.0.1',
    upstream: process.env.BENCH_UPSTREAM ?? '',
    bookPollMs: pollMs,
    pricePollMs: pollMs,
    upstreamConcurrency,
    upstreamRps,
    // Every bench client connects from 127.0.0.1 without a key, and the poll-capacity scenario
    // subscribes hundreds of markets at once: isolation has its own tests, not these runs.
    isolation: {
      maxPrivateTargetsPerConnection: 100_000,
      maxPrivateTargetsPerKey: 100_000,
      newMarketsPerSecond: 100_000,
      newMarketsPerSecondPerKey: 100_000,
      lookupsPerSecond: 2,
      maxRestPaths: 1_000,
      maxRestPathsPerAddress: 100_000,
      maxCatalogueFilters: 1_000,
      maxCatalogueFiltersPerAddress: 100_000,
      maxCandleStreams: 1_000,
      maxCandleStreamsPerAddress: 100_000,
      newStreamsPerSecondPerAddress: 100_000,
      unconfirmedPathsPerSecondPerAddress: 10_000,
    },
    logLevel: 'silent',
    // poll-capacity with --otel-sample-ratio: a relay tracing to a receiver that drops the spans.
    ...(process.env.BENCH_OTEL_ENDPOINT === undefined
      ? {}
      : {
          otelEndpoint: process.env.BENCH_OTEL_ENDPOINT,
          otelSampleRatio: Number(process.env.BENCH_OTEL_SAMPLE_RATIO),
        }),
    simMarkets: 0,
    simSeed: 1,
    // BENCH_HISTORY (the history scenario): the store it records into; unset records nothing.
    history: benchHistoryConfig(process.env.BENCH_HISTORY, process.env.BENCH_HISTORY_DIR),
    // Whatever the default: scenarios 3 and 7 compare clients that offer deflate with those that do not.
    compression: true,
    tuning: {
      // Unset: the relay's default window. BENCH_COALESCE_MS=0 measures without coalescing.
      ...(process.env.BENCH_COALESCE_MS === undefined
        ? {}
        : { coalesceMs: Number(process.env.BENCH_COALESCE_MS) }),
      // The baselines send no heartbeats; one every minute keeps the relay's out of the windows.
      heartbeatMs: 60_000,
      maxConnections: 20_000,
      // The load generator opens every connection from 127.0.0.1.
      edge: {
        maxConnectionsPerAddress: 20_000,
        connectionsPerSecondPerAddress: 100_000,
        connectionBurstPerAddress: 100_000,
        maxPendingConnections: 20_000,
        maxPendingPerAddress: 20_000,
      },
      connection: { maxStreams: 1_000, requestsPerSecond: 100, requestBurst: 100 },
    },
  },
  pino({ level: 'silent' }),
);

/** Upstream polls finished, per kind and outcome (poll-capacity counts book polls per window). */
const polls: Record<string, number> = {};
/** Their durations summed per kind and outcome, ms: how long upstream took to answer. */
const pollDurationMs: Record<string, number> = {};
relay.events.on('poll:done', ({ kind, outcome, durationMs }) => {
  const name = `${kind}:${outcome}`;
  polls[name] = (polls[name] ?? 0) + 1;
  pollDurationMs[name] = (pollDurationMs[name] ?? 0) + durationMs;
});

/**
 * The event loop's delay, sampled every 10 ms from the history scenario's first window on (its p99
 * per window): only when asked, since its 100 wake-ups a second are work no anchor does.
 */
let loopDelay: IntervalHistogram | undefined;

serveIpc({
  ready: () => ({ url: `${relay.url.replace(/^http/, 'ws')}/v1/ws` }),
  usage: () => sampleUsage(),
  /** The event loop's delay since the last reset (ms), and a reset for the next window. */
  loopDelay: () => ({
    p99Ms: (loopDelay?.percentile(99) ?? 0) / 1e6,
    maxMs: (loopDelay?.max ?? 0) / 1e6,
    samples: loopDelay?.count ?? 0,
  }),
  resetLoopDelay: () => {
    if (loopDelay === undefined) {
      loopDelay = monitorEventLoopDelay({ resolution: 10 });
      loopDelay.enable();
    }
    loopDelay.reset();
  },
  /** What the recorder wrote and holds (history scenario); undefined when it records nothing. */
  history: async () => {
    if (relay.history === undefined) return undefined;
    await relay.history.flush();
    const { written, dropped, writeFailures } = relay.history.stats();
    return { written, dropped, writeFailures };
  },
  /**
   * What the recorder holds written, and the embedded store's log folded into its file (history
   * scenario): a window that ends with it has paid for compressing and writing what it recorded.
   */
  checkpoint: async () => {
    if (relay.history === undefined) return;
    await relay.history.flush();
    if (relay.history.store instanceof DuckDbHistoryStore) await relay.history.store.checkpoint();
  },
  memory: () => memoryAfterGc(),
  connections: () => relay.ws.connections.size,
  polls: () => ({ ...polls }),
  pollDurationMs: () => ({ ...pollDurationMs }),
  /** Frames and socket writes over every open connection (write coalescing's effect). */
  writes: () => {
    const total = { frames: 0, writes: 0 };
    for (const connection of relay.ws.connections) {
      total.frames += connection.writeCounts.frames;
      total.writes += connection.writeCounts.writes;
    }
    return total;
  },
});
process.on('SIGTERM', () => {
  void relay.close().finally(() => process.exit(0));
});
