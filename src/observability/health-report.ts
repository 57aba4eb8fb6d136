/**
 * @module observability/health-report
 * The relay's own state and upstream's, as one report: served by `GET /health` (src/http/health.ts)
 * and read by the status snapshot and metrics. `ok` while serving; `upstream_unreachable` when
 * upstream has been unreachable for longer than `upstreamDownAfterMs`, `upstream_misconfigured`
 * when it answers `/health` as something other than upstream (a load balancer should then prefer
 * another relay); `shutting_down` while draining.
 */

import type { RecordReader } from '../history/recorder.ts';
import type { Broker, ClusterReport } from '../relay/coordination/broker.ts';
import type { FreshnessReport } from '../relay/poll/freshness.ts';
import type { PollerPool } from '../relay/poll/poller-pool.ts';
import type { UpstreamHealthMonitor, UpstreamIdentity } from '../relay/poll/upstream-health.ts';
import type { StreamRegistry } from '../relay/streams/registry.ts';
import { version } from '../util/version.ts';
import type { WsEndpoint } from '../ws/endpoint.ts';

export interface HealthSources {
  poller: PollerPool;
  /** Leases, numbering, history and the budget; it says what /status and /metrics show of it. */
  broker: Broker;
  registry: StreamRegistry;
  ws: WsEndpoint;
  upstream: UpstreamHealthMonitor;
  upstreamUrl: string;
  startedAt: number;
  upstreamDownAfterMs: number;
  isShuttingDown: () => boolean;
  /** The record of what the relay sends; undefined with `--history off`. */
  history?: RecordReader | undefined;
  /**
   * The public `/health` when the operator's view is elsewhere (`--operator-port`) or behind
   * `--operator-key`: no upstream URL and no error texts (they name hosts and paths).
   */
  redacted?: boolean;
}

export type HealthStatus = 'ok' | 'upstream_unreachable' | 'upstream_misconfigured' | 'shutting_down';

/** The body of `GET /health`; the status snapshot and metrics read the same report. */
export interface HealthReport {
  status: HealthStatus;
  version: string;
  uptimeSeconds: number;
  upstream: {
    /** Absent from a redacted report. */
    url?: string;
    /**
     * Whether upstream answered within `upstreamDownAfterMs` (false before its first answer); a
     * misconfigured upstream is reachable when its address answered at all (a redirect, a 404, a page).
     */
    reachable: boolean;
    /** Whether `/health` answered with upstream's shape (`mismatch`: misconfigured). */
    identity: UpstreamIdentity['state'];
    /** What `/health` answered instead (status, redirect target, body start); absent unless `mismatch` or redacted. */
    problem?: string;
    lastSuccessAt: string | null;
    /** Absent from a redacted report. */
    lastError?: string | null;
    lastFailureAt: string | null;
    errorRate: number;
    /** Upstream's 429s, and the rate the relay holds itself to after them (null: not lowered). */
    rateLimited: { total: number; lastAt: string | null; limitRps: number | null };
  };
  connections: number;
  streams: number;
  staleStreams: number;
  polledMarkets: { book: number; price: number };
  pollIntervalsMs: { book: number; price: number };
  /**
   * The maximum-age promise and what polling achieves: `maxAgeKept` is false while some stream is
   * older than `--max-age-ms`, or the budget cannot confirm every stream that often.
   */
  freshness: FreshnessReport;
  /** Cluster mode only. */
  redis?: ClusterReport;
  history: HistoryHealth;
}

/**
 * The record (docs/history.md "Operating it"): `recording` false with `--history off`. A failing
 * store leaves `status` as it is: live serving goes on without it, and `writing` says so.
 */
export type HistoryHealth =
  | { recording: false }
  | {
      recording: true;
      /** false while writes to the store fail (a full or unwritable disk): messages are then not recorded. */
      writing: boolean;
      /** false while the store does not answer (a shared engine away): its figures are the last it gave. */
      reachable: boolean;
      /** Absent from a redacted report. */
      store?: string;
      lastError?: string | null;
      rows: number;
      bytes: number;
      oldest: string | null;
      writeLagMs: number;
      writeFailures: number;
      dropped: number;
    };

function historyHealth(history: RecordReader | undefined, redacted: boolean): HistoryHealth {
  if (history === undefined) return { recording: false };
  const stats = history.stats();
  return {
    recording: true,
    writing: !stats.failing,
    reachable: stats.reachable,
    ...(redacted ? {} : { store: history.store.description, lastError: stats.lastError ?? null }),
    rows: stats.stored.rows,
    bytes: stats.stored.bytes,
    oldest: iso(stats.stored.oldest),
    writeLagMs: stats.writeLagMs,
    writeFailures: stats.writeFailures,
    dropped: stats.dropped,
  };
}

export function healthReport(sources: HealthSources, now = Date.now()): HealthReport {
  const upstream = sources.upstream.snapshot();
  const lastContact = upstream.lastSuccessAt ?? sources.startedAt;
  // Answering, but not as upstream (a wrong base path, another service): as bad as unreachable.
  const misconfigured = upstream.identity.state === 'mismatch';
  // Declared down only after the grace (from the start, before any answer)...
  const upstreamDown = misconfigured || now - lastContact > sources.upstreamDownAfterMs;
  // ...but never called reachable before it has answered. A misconfigured address answers, only
  // not as upstream: reachable, so that it is not mistaken for a network problem.
  const upstreamReachable = misconfigured
    ? upstream.lastAnswerAt !== undefined && now - upstream.lastAnswerAt <= sources.upstreamDownAfterMs
    : !upstreamDown && upstream.lastSuccessAt !== undefined;
  const redacted = sources.redacted === true;
  const shuttingDown = sources.isShuttingDown();
  let staleStreams = 0;
  for (const stream of sources.registry.streams()) if (stream.freshness === 'stale') staleStreams += 1;
  return {
    status: shuttingDown
      ? 'shutting_down'
      : misconfigured
        ? 'upstream_misconfigured'
        : upstreamDown
          ? 'upstream_unreachable'
          : 'ok',
    version,
    uptimeSeconds: Math.round((now - sources.startedAt) / 1000),
    upstream: {
      ...(redacted ? {} : { url: sources.upstreamUrl }),
      reachable: upstreamReachable,
      identity: upstream.identity.state,
      ...(redacted || upstream.identity.problem === undefined ? {} : { problem: upstream.identity.problem }),
      lastSuccessAt: iso(upstream.lastSuccessAt),
      ...(redacted ? {} : { lastError: upstream.lastError ?? null }),
      lastFailureAt: iso(upstream.lastFailureAt),
      errorRate: upstream.errorRate,
      rateLimited: {
        total: upstream.rateLimited.total,
        lastAt: iso(upstream.rateLimited.lastAt),
        limitRps: roundedRps(sources.poller.rateLimitRps),
      },
    },
    connections: sources.ws.connections.size,
    streams: sources.registry.size,
    staleStreams,
    polledMarkets: { book: sources.poller.bookMarketCount, price: sources.poller.priceMarketCount },
    pollIntervalsMs: {
      book: sources.poller.intervals.bookIntervalMs,
      price: sources.poller.intervals.priceIntervalMs,
    },
    freshness: sources.poller.freshness(now),
    // Cluster mode only: what the broker reports of itself.
    ...sources.broker.report(redacted),
    history: historyHealth(sources.history, redacted),
  };
}

function roundedRps(rps: number | undefined): number | null {
  return rps === undefined ? null : Math.round(rps * 10) / 10;
}

function iso(ms: number | undefined): string | null {
  return ms === undefined ? null : new Date(ms).toISOString();
}
