/**
 * @module http/health
 * `GET /health` (docs/operations.md): the relay's own state and upstream's. 200 while serving; 503 when
 * upstream has been unreachable for longer than `upstreamDownAfterMs` (a load balancer should then
 * prefer another relay), or while shutting down.
 */
import type { FastifyInstance } from 'fastify';
import type { PollCoordinator } from '../cluster/coordinator.ts';
import type { PollerPool } from '../relay/poller-pool.ts';
import type { StreamRegistry } from '../relay/registry.ts';
import type { UpstreamHealthMonitor } from '../relay/upstream-health.ts';
import { version } from '../version.ts';
import type { WsEndpoint } from '../ws/endpoint.ts';

export interface HealthSources {
  poller: PollerPool;
  coordinator: PollCoordinator;
  registry: StreamRegistry;
  ws: WsEndpoint;
  upstream: UpstreamHealthMonitor;
  upstreamUrl: string;
  startedAt: number;
  upstreamDownAfterMs: number;
  isShuttingDown: () => boolean;
}

export function healthReport(sources: HealthSources, now = Date.now()) {
  const upstream = sources.upstream.snapshot();
  const lastContact = upstream.lastSuccessAt ?? sources.startedAt;
  const upstreamReachable = now - lastContact <= sources.upstreamDownAfterMs;
  const shuttingDown = sources.isShuttingDown();
  const cluster = sources.coordinator.status();
  let staleStreams = 0;
  for (const stream of sources.registry.streams()) if (stream.freshness === 'stale') staleStreams += 1;
  return {
    status: shuttingDown ? 'shutting_down' : upstreamReachable ? 'ok' : 'upstream_unreachable',
    version,
    uptimeSeconds: Math.round((now - sources.startedAt) / 1000),
    upstream: {
      url: sources.upstreamUrl,
      reachable: upstreamReachable,
      lastSuccessAt: iso(upstream.lastSuccessAt),
      lastError: upstream.lastError ?? null,
      lastFailureAt: iso(upstream.lastFailureAt),
      errorRate: upstream.errorRate,
    },
    connections: sources.ws.connections.size,
    streams: sources.registry.size,
    staleStreams,
    polledMarkets: { book: sources.poller.bookMarketCount, price: sources.poller.priceMarketCount },
    pollIntervalsMs: {
      book: sources.poller.intervals.bookIntervalMs,
      price: sources.poller.intervals.priceIntervalMs,
    },
    // Cluster mode only. Redis being away is reported, not a 503: the relay keeps serving by
    // polling for itself until the leases work again.
    ...(cluster.mode === 'redis'
      ? {
          redis: {
            connected: cluster.connected,
            ownedTargets: cluster.owned,
            followedTargets: cluster.followed,
            lastError: cluster.lastError ?? null,
          },
        }
      : {}),
  };
}

export function registerHealth(app: FastifyInstance, sources: HealthSources): void {
  app.get('/health', async (_request, reply) => {
    const report = healthReport(sources);
    return reply.code(report.status === 'ok' ? 200 : 503).send(report);
  });
}

function iso(ms: number | undefined): string | null {
  return ms === undefined ? null : new Date(ms).toISOString();
}
