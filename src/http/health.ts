/**
 * @module http/health
 * `GET /health`: the health report (src/observability/health-report.ts) as JSON, with status 200
 * while serving and 503 when upstream is unreachable or the relay is shutting down.
 */
import type { FastifyInstance } from 'fastify';
import { type HealthSources, healthReport } from '../observability/health-report.ts';

export function registerHealth(app: FastifyInstance, sources: HealthSources): void {
  app.get('/health', async (_request, reply) => {
    const report = healthReport(sources);
    return reply.code(report.status === 'ok' ? 200 : 503).send(report);
  });
}
