/**
 * @module observability/event-loop-delay
 * The event-loop delay metrics, under prom-client's names (`nodejs_eventloop_lag_*`), measured by
 * a probe of our own instead of prom-client's `monitorEventLoopDelay`. That monitor wakes the
 * process every 100 ms whatever the relay does: half the wake-ups of a relay that holds one book
 * polled every second (bench/idle-relay.ts). The probe is a timer that records how late it ran:
 * every 100 ms while the event loop was busy for more than 1 % of the last interval, every second
 * while it was not. An idle loop has nothing to delay its timers, and the first probe after work
 * arrives goes back to every 100 ms. What an idle loop can miss is a lone stall shorter than a
 * second that starts and ends between two probes: the probe sees one in proportion to its length
 * (a 300 ms stall three times in ten), where every 100 ms it saw every stall longer than that.
 *
 * The figures are the delay itself, the time a probe ran past when it was due, so an idle loop
 * reads about 0; `monitorEventLoopDelay` recorded the whole interval, its resolution included.
 */
import { createHistogram, type EventLoopUtilization, performance } from 'node:perf_hooks';
import { type Aggregator, Gauge, type Registry } from 'prom-client';

/** How often the probe runs while the loop has work. */
export const BUSY_PROBE_MS = 100;
/** How often the probe runs while the loop is idle. */
export const IDLE_PROBE_MS = 1_000;
/** The share of the last interval the loop must have been busy for the probe to run every 100 ms. */
const BUSY_UTILISATION = 0.01;

/** prom-client's event-loop metrics (lib/metrics/eventLoopLag.js), which these replace. */
export const EVENT_LOOP_METRICS = [
  'nodejs_eventloop_lag_seconds',
  'nodejs_eventloop_lag_min_seconds',
  'nodejs_eventloop_lag_max_seconds',
  'nodejs_eventloop_lag_mean_seconds',
  'nodejs_eventloop_lag_stddev_seconds',
  'nodejs_eventloop_lag_p50_seconds',
  'nodejs_eventloop_lag_p90_seconds',
  'nodejs_eventloop_lag_p99_seconds',
] as const;

export interface EventLoopProbe {
  /** The probe's interval now (ms): what the next sample waits for. */
  readonly everyMs: number;
  /** Stops the probe. */
  close(): void;
}

/**
 * Registers the event-loop metrics on `registry` (named with `prefix`) and starts their probe. The
 * histogram's figures cover the time since the previous scrape (each scrape resets it, as
 * prom-client's did); `nodejs_eventloop_lag_seconds` is, as there, how late a `setImmediate` set
 * by the previous scrape ran.
 */
export function registerEventLoopDelay(prefix: string, registry: Registry): EventLoopProbe {
  const histogram = createHistogram();
  let everyMs = BUSY_PROBE_MS;
  let dueAt = 0;
  let utilisation: EventLoopUtilization = performance.eventLoopUtilization();
  let timer: NodeJS.Timeout | undefined;
  const probe = () => {
    const now = performance.now();
    // The histogram takes whole nanoseconds of at least 1.
    histogram.record(Math.max(1, Math.round((now - dueAt) * 1e6)));
    const since = performance.eventLoopUtilization(utilisation);
    utilisation = performance.eventLoopUtilization();
    everyMs = since.utilization > BUSY_UTILISATION ? BUSY_PROBE_MS : IDLE_PROBE_MS;
    schedule(now);
  };
  const schedule = (now: number) => {
    dueAt = now + everyMs;
    timer = setTimeout(probe, everyMs);
    timer.unref();
  };
  schedule(performance.now());

  const registers = [registry];
  const lag = new Gauge({
    name: `${prefix}nodejs_eventloop_lag_seconds`,
    help: 'Lag of event loop in seconds.',
    registers,
    aggregator: 'average',
    // One collect sets every figure, so one scrape reads and resets the histogram once. Registered
    // before the gauges it sets: a scrape reads the metrics in the order they were registered, and
    // read after them it would show each the figures of the scrape before.
    collect() {
      const start = process.hrtime.bigint();
      setImmediate(() => lag.set(Number(process.hrtime.bigint() - start) / 1e9));
      // No sample since the last scrape: nothing was delayed that the probe saw.
      const seconds = (ns: number) => (histogram.count === 0 ? 0 : ns / 1e9);
      lagMin.set(seconds(histogram.min));
      lagMax.set(seconds(histogram.max));
      lagMean.set(seconds(histogram.mean));
      lagStddev.set(seconds(histogram.stddev));
      for (const { percentile, gauge: percentileGauge } of percentiles)
        percentileGauge.set(seconds(histogram.percentile(percentile)));
      histogram.reset();
    },
  });
  // Aggregated across processes as prom-client's were (its cluster registry).
  const gauge = (name: string, help: string, aggregator: Aggregator = 'average') =>
    new Gauge({ name: `${prefix}${name}`, help, registers, aggregator });
  const lagMin = gauge('nodejs_eventloop_lag_min_seconds', 'The minimum recorded event loop delay.', 'min');
  const lagMax = gauge('nodejs_eventloop_lag_max_seconds', 'The maximum recorded event loop delay.', 'max');
  const lagMean = gauge('nodejs_eventloop_lag_mean_seconds', 'The mean of the recorded event loop delays.');
  const lagStddev = gauge(
    'nodejs_eventloop_lag_stddev_seconds',
    'The standard deviation of the recorded event loop delays.',
  );
  const percentiles = ([50, 90, 99] as const).map((percentile) => ({
    percentile,
    gauge: gauge(
      `nodejs_eventloop_lag_p${percentile}_seconds`,
      `The ${percentile}th percentile of the recorded event loop delays.`,
    ),
  }));

  return {
    get everyMs() {
      return everyMs;
    },
    close() {
      clearTimeout(timer);
    },
  };
}
