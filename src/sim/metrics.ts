/**
 * @module sim/metrics
 * The simulator's own Prometheus metrics (`GET /metrics` on its port): requests served by endpoint
 * pattern and status, faults injected, the fault knobs and the market activity as set now, and the
 * markets by status. One Registry per simulator, so several in one process do not clash.
 */

import { Registry } from 'prom-client';
import { metricFactory } from '../util/metric-factory.ts';
import type { SimControl } from './admin.ts';
import type { InjectedFault } from './faults.ts';

const PREFIX = 'market_relay_sim_';

export interface SimMetrics {
  readonly registry: Registry;
  /** One answered API request; `route` is the endpoint's path pattern, undefined when none matched. */
  served(route: string | undefined, status: number, fault: InjectedFault | undefined): void;
  ticked(): void;
}

export function createSimMetrics(control: SimControl): SimMetrics {
  const registry = new Registry();
  const metric = metricFactory(PREFIX, registry);
  const requests = metric.counter(
    'requests_total',
    'API requests answered, by endpoint path pattern (`unmatched` when none) and HTTP status.',
    ['endpoint', 'status'],
  );
  const faults = metric.counter(
    'faults_injected_total',
    'Answers replaced by an injected fault (error: 500, rate-limit: 429, malformed body).',
    ['fault'],
  );
  const ticks = metric.counter('ticks_total', 'Market evolution steps (timer ticks and POST /_sim/tick).');
  metric.gauge(
    'fault_rate',
    'Fault probability per request as set now, by fault (error, rate_limit, malformed).',
    (gauge) => {
      const current = control.faults();
      gauge.set({ fault: 'error' }, current.errorRate);
      gauge.set({ fault: 'rate_limit' }, current.rateLimitRate);
      gauge.set({ fault: 'malformed' }, current.malformedRate);
    },
    ['fault'],
  );
  metric.gauge('added_latency_seconds', 'Delay added before every API answer, as set now.', (gauge) => {
    gauge.set(control.faults().latencyMs / 1000);
  });
  metric.gauge(
    'tick_interval_seconds',
    'Market evolution interval as set now (0: markets stand still).',
    (gauge) => {
      gauge.set(control.market.areBooksChanging() ? control.tickMs() / 1000 : 0);
    },
  );
  metric.gauge(
    'markets',
    'Markets the simulator serves, by status.',
    (gauge) => {
      gauge.reset();
      const counts = new Map<string, number>();
      for (const market of control.market.markets()) {
        counts.set(market.status, (counts.get(market.status) ?? 0) + 1);
      }
      for (const [status, count] of counts) gauge.set({ status }, count);
    },
    ['status'],
  );
  return {
    registry,
    served(route, status, fault) {
      requests.inc({ endpoint: route ?? 'unmatched', status: String(status) });
      if (fault !== undefined) faults.inc({ fault });
    },
    ticked: () => ticks.inc(),
  };
}
