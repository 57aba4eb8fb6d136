/**
 * @module http/health
 * `GET /health`: the health report (src/observability/health-report.ts) as JSON, with status 200
 * while serving and 503 when upstream is unreachable or misconfigured, or the relay is shutting down.
 * Beside it the two probes an orchestrator wants apart (docs/operations.md "Health"): `/livez`, the
 * process works (it checks nothing upstream, so an upstream outage never restarts relays), and
 * `/readyz`, it can serve fresh data now.
 */
import type { FastifyInstance } from 'fastify';
import { type HealthReport, type HealthSources, healthReport } from '../observability/health-report.ts';

/** Why the relay cannot serve fresh data now; undefined when it can. */
export function notReadyReason(report: HealthReport): string | undefined {
  if (report.status !== 'ok') return report.status;
  // Before upstream's first answer there is nothing fresh to serve.
  if (report.upstream.lastSuccessAt === null) return 'upstream_not_answered_yet';
  return undefined;
}

export function registerHealth(app: FastifyInstance, sources: HealthSources): void {
  app.get('/health', async (_request, reply) => {
    const report = healthReport(sources);
    return reply.code(report.status === 'ok' ? 200 : 503).send(report);
  });
  // A wedged process does not answer at all: the probe's own timeout is what catches it.
  app.get('/livez', async (_request, reply) => reply.code(200).send({ status: 'alive' }));
  app.get('/readyz', async (_request, reply) => {
    const reason = notReadyReason(healthReport(sources));
    return reason === undefined
      ? reply.code(200).send({ status: 'ready' })
      : reply.code(503).send({ status: 'not_ready', reason });
  });
}
