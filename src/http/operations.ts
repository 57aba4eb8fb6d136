/**
 * @module http/operations
 * The operators' view of one relay, wired in one call: `GET /metrics` (Prometheus), the status page
 * (`GET /`, its assets, `GET /status/events`, `/status/snapshot`, `/status/markets`), the client SDK
 * bundle for it (`GET /assets/client.js`), and the operational log. Everything is stopped with the app.
 * These endpoints need no API key: they are the operator's view; the page's book view connects to
 * the WebSocket with the `?token=` of its own URL (protocol.md "Transport").
 */
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { ActivityTracker } from '../observability/activity.ts';
import { subscribeLogs } from '../observability/logs.ts';
import { createRelayMetrics } from '../observability/metrics.ts';
import type { RelayView } from '../observability/relay-view.ts';
import { statusSnapshot } from '../observability/status-snapshot.ts';
import { registerClientBundle } from './client-bundle.ts';
import { MarketCatalog, registerMarketCatalog } from './market-catalog.ts';
import { registerStatusEvents } from './status-events.ts';
import { registerStatusPage } from './status-page.ts';

export interface Operations {
  readonly catalog: MarketCatalog;
}

export function registerOperations(app: FastifyInstance, view: RelayView & { logger: Logger }): Operations {
  const metrics = createRelayMetrics(view);
  const activity = new ActivityTracker(view);
  const stopLogs = subscribeLogs(view.logger, view);
  const catalog = new MarketCatalog(view.client);

  app.get('/metrics', async (_request, reply) =>
    reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()),
  );
  registerStatusPage(app);
  registerClientBundle(app);
  registerMarketCatalog(app, catalog);
  registerStatusEvents(app, () => statusSnapshot(view, activity, (market) => catalog.title(market)));

  app.addHook('onClose', async () => {
    metrics.close();
    activity.close();
    stopLogs();
  });
  return { catalog };
}
