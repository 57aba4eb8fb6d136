/**
 * @module observability/status-snapshot
 * What the status page shows, as one JSON document: the /health report, upstream latency for the
 * sparkline, the update rate, error totals and recent errors, and every stream with its freshness
 * (live / stale, age of the last snapshot, effective poll interval, subscriber count), and the
 * share of the polling budget the heaviest client address groups use, and where each stream's record
 * starts (observability/record-reach.ts).
 */

import type { BookDepth, Channel, StreamState } from '../../packages/protocol/src/protocol/messages.ts';
import type { ActivityReport, ActivityTracker } from './activity.ts';
import { type HealthReport, healthReport } from './health-report.ts';
import type { RecordReach } from './record-reach.ts';
import type { RelayView } from './relay-view.ts';
import { type ShareReport, STATUS_TOP_GROUPS, shareReport } from './share-report.ts';

/** Latency points the sparkline draws (the monitor keeps the last 100 successful attempts). */
const SPARKLINE_POINTS = 60;

export interface StreamRow {
  channel: Channel;
  market: string;
  title: string | null;
  depth: BookDepth | undefined;
  state: StreamState;
  seq: number;
  subscribers: number;
  /** Since the last upstream response that confirmed this stream's state; null before the first. */
  lastSnapshotAgeMs: number | null;
  /** Since the last change sent; null before the first. */
  lastChangeAgeMs: number | null;
  pollIntervalMs: number;
  /** ISO time of the stream's oldest recorded message; null when none is known (or `--history off`). */
  recordFrom: string | null;
}

export interface StatusSnapshot {
  now: string;
  health: HealthReport;
  upstream: { latencyMs: number[]; inFlight: number; queued: number };
  activity: ActivityReport;
  streams: StreamRow[];
  /** Who uses the polling budget: the heaviest address groups (or API keys) and how many there are. */
  shares: ShareReport;
}

export function statusSnapshot(
  view: RelayView,
  activity: ActivityTracker,
  titleOf: (market: string) => string | undefined,
  reach: RecordReach | undefined,
  now = Date.now(),
): StatusSnapshot {
  const streams: StreamRow[] = [];
  const held = [...view.registry.streams()];
  const recordFrom = reach?.oldest(
    held.map((stream) => stream.key),
    now,
  );
  for (const stream of held) {
    const oldest = recordFrom?.(stream.key);
    streams.push({
      channel: stream.channel,
      market: stream.market,
      title: titleOf(stream.market) ?? null,
      depth: stream.depth,
      state: stream.freshness,
      seq: stream.seq,
      subscribers: stream.clientCount,
      lastSnapshotAgeMs: stream.lastSuccessAt === 0 ? null : now - stream.lastSuccessAt,
      lastChangeAgeMs: stream.lastChangeAt === 0 ? null : now - stream.lastChangeAt,
      pollIntervalMs: view.poller.intervalOf(stream.channel),
      recordFrom: oldest === undefined ? null : new Date(oldest).toISOString(),
    });
  }
  streams.sort((a, b) => b.subscribers - a.subscribers || a.market.localeCompare(b.market));
  return {
    now: new Date(now).toISOString(),
    health: healthReport(view, now),
    upstream: {
      latencyMs: view.upstream.snapshot().recentLatencyMs.slice(-SPARKLINE_POINTS),
      ...view.client.load(),
    },
    activity: activity.report(),
    streams,
    shares: shareReport(view.poller.shares(), STATUS_TOP_GROUPS),
  };
}
