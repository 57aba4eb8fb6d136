/**
 * @module observability/replay-metrics
 * The replays' metrics (docs/operations.md "Metrics"): how many run, what they send (stream messages
 * and `replay_gap`s) and what is refused, by reason, so that an operator sees replays crowding the
 * limits or clients asking for ranges the record no longer keeps. Read from the replay service at
 * scrape time, so they never drift from it.
 */
import { Counter, type Registry } from 'prom-client';
import { type ReplayCounts, replayRefusalReasons } from '../relay/session/replay/replays.ts';
import type { MetricFactory } from '../util/metric-factory.ts';

export function registerReplayMetrics(
  prefix: string,
  registry: Registry,
  metric: MetricFactory,
  replays: ReplayCounts,
): void {
  metric.gauge('replays_running', 'Replays running on every connection.', (gauge) => {
    gauge.set(replays.running);
  });
  const registers = [registry];
  const cumulative = (name: string, help: string, value: () => number) =>
    new Counter({
      name: `${prefix}${name}`,
      help,
      registers,
      collect() {
        this.reset();
        this.inc(value());
      },
    });
  cumulative('replays_started_total', 'Replays started.', () => replays.started);
  cumulative(
    'replay_messages_sent_total',
    'Recorded stream messages sent by replays (those of running replays included).',
    () => replays.messagesSent,
  );
  cumulative(
    'replay_gaps_sent_total',
    'replay_gap messages sent by replays: holes in the record a replay crossed.',
    () => replays.gapsSent,
  );
  new Counter({
    name: `${prefix}replays_refused_total`,
    help: 'Replays refused, by reason (connection_limit, address_limit, duplicate_id, invalid, out_of_retention).',
    labelNames: ['reason'],
    registers,
    collect() {
      this.reset();
      for (const reason of replayRefusalReasons) this.inc({ reason }, replays.refused[reason]);
    },
  });
}
