/**
 * @module observability/history-metrics
 * The record's metrics (docs/history.md "Operating it"): what the history store holds (bytes, rows,
 * the oldest record's age) against what it may hold (the retention and the size limit, so that an
 * alert can tell a record cut short by its size), how long a message waits before it is written,
 * and what could not be written. Read from the recorder at scrape time; absent with `--history off`.
 */
import { Counter, type Registry } from 'prom-client';
import type { RecordReader } from '../history/recorder.ts';
import type { MetricFactory } from '../util/metric-factory.ts';

export function registerHistoryMetrics(
  prefix: string,
  registry: Registry,
  metric: MetricFactory,
  history: RecordReader,
): void {
  const stats = () => history.stats();
  metric.gauge('history_stored_bytes', 'Bytes the history store occupies, all of it counted.', (gauge) => {
    gauge.set(stats().stored.bytes);
  });
  metric.gauge('history_rows', 'Recorded messages the history store holds.', (gauge) => {
    gauge.set(stats().stored.rows);
  });
  metric.gauge(
    'history_oldest_record_age_seconds',
    'Age of the oldest recorded message held (0 when none).',
    (gauge) => {
      const oldest = stats().stored.oldest;
      gauge.set(oldest === undefined ? 0 : (Date.now() - oldest) / 1000);
    },
  );
  metric.gauge(
    'history_retention_seconds',
    'How long recorded messages are kept (--history-retention).',
    (gauge) => {
      gauge.set(history.retention.maxAgeMs / 1000);
    },
  );
  metric.gauge(
    'history_max_bytes',
    'The most the history store may hold (--history-max-bytes); past it the oldest records go first.',
    (gauge) => {
      gauge.set(history.retention.maxBytes);
    },
  );
  metric.gauge(
    'history_write_lag_seconds',
    'How long the oldest message of the last write waited in the buffer (at most about the flush window when healthy).',
    (gauge) => {
      gauge.set(stats().writeLagMs / 1000);
    },
  );
  metric.gauge('history_pending_messages', 'Messages waiting for the next write.', (gauge) => {
    gauge.set(stats().pending);
  });
  metric.gauge(
    'history_store_up',
    '1 while the history store answers (a shared engine reachable), else 0.',
    (gauge) => {
      gauge.set(stats().reachable ? 1 : 0);
    },
  );
  metric.gauge(
    'history_write_failing',
    '1 while the last write to the history store failed, else 0.',
    (gauge) => {
      gauge.set(stats().failing ? 1 : 0);
    },
  );
  cumulative(
    prefix,
    registry,
    'history_write_failures_total',
    'Writes to the history store that failed.',
    () => stats().writeFailures,
  );
  cumulative(
    prefix,
    registry,
    'history_messages_recorded_total',
    'Messages written to the history store.',
    () => stats().written,
  );
  cumulative(
    prefix,
    registry,
    'history_messages_dropped_total',
    'Messages not recorded: in a failed write, or past the buffer bound.',
    () => stats().dropped,
  );
}

/** A counter whose value the recorder keeps: set from it at each scrape. */
function cumulative(
  prefix: string,
  registry: Registry,
  name: string,
  help: string,
  value: () => number,
): void {
  new Counter({
    name: `${prefix}${name}`,
    help,
    registers: [registry],
    collect() {
      this.reset();
      this.inc(value());
    },
  });
}
