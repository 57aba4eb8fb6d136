/**
 * @module http/operations
 * The operators' view of one relay, wired in one call: `GET /metrics` (Prometheus), the status page
 * (`GET /`, its assets, `GET /status/events`, `/status/snapshot`, `/status/markets`), the client SDK
 * bundle for it (`GET /assets/client.js`), `POST /drain`, and the operational log. Everything is stopped with the app.
 * These endpoints need no API key: they are the operator's view; the page's book view connects to
 * the WebSocket with the `?token=` of its own URL (protocol.md "Transport"). They may need the
 * operator key instead, and may live on their own port (docs/operations.md "Operator endpoints").
 */
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { ActivityTracker } from '../observability/activity.ts';
import { subscribeLogs } from '../observability/logs.ts';
import { createRelayMetrics } from '../observability/metrics.ts';
import { RecordReach } from '../observability/record-reach.ts';
import type { RelayView } from '../observability/relay-view.ts';
import { statusSnapshot } from '../observability/status-snapshot.ts';
import { registerClientBundle } from './client-bundle.ts';
import { type DrainControl, registerDrainRoute } from './drain-route.ts';
import { MarketCatalog, registerMarketCatalog } from './market-catalog.ts';
import { type OperatorKeyGuard, requireOperatorKey } from './operator-access.ts';
import { registerStatusEvents, type StatusFeed, type StatusFeedLimits } from './status-events.ts';
import { registerStatusPage } from './status-page.ts';

export interface Operations {
  readonly catalog: MarketCatalog;
  /** Set once the app is ready (the routes are registered in their own plugin context). */
  readonly statusFeed: StatusFeed | undefined;
}

export interface OperatorOptions {
  /** When set, every operator endpoint needs its key (wrong keys throttled per address). */
  operatorKey?: OperatorKeyGuard | undefined;
  statusFeed: StatusFeedLimits;
  /** `POST /drain`; absent: no such route. */
  drain?: DrainControl;
}

export function registerOperations(
  app: FastifyInstance,
  view: RelayView & { logger: Logger },
  options: OperatorOptions,
): Operations {
  const metrics = createRelayMetrics(view);
  const activity = new ActivityTracker(view);
  const stopLogs = subscribeLogs(view.logger, view);
  const catalog = new MarketCatalog(view.client);
  const reach = view.history === undefined ? undefined : new RecordReach(view.history.store);
  let statusFeed: StatusFeed | undefined;

  // An encapsulated context, so the operator key guards these routes and not /health or the WebSocket.
  app.register(async (scope) => {
    if (options.operatorKey !== undefined) requireOperatorKey(scope, options.operatorKey);
    scope.get('/metrics', async (_request, reply) =>
      reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()),
    );
    registerStatusPage(scope);
    registerClientBundle(scope);
    registerMarketCatalog(scope, catalog);
    if (options.drain !== undefined) registerDrainRoute(scope, options.drain);
    statusFeed = registerStatusEvents(
      scope,
      () => statusSnapshot(view, activity, (market) => catalog.title(market), reach),
      options.statusFeed,
    );
  });

  app.addHook('onClose', async () => {
    metrics.close();
    activity.close();
    stopLogs();
    await reach?.settled();
  });
  return {
    catalog,
    get statusFeed() {
      return statusFeed;
    },
  };
}
