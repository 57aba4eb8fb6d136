/**
 * @module observability/metrics
 * The relay's Prometheus metrics (`GET /metrics`), named after the Prometheus conventions: prefix
 * `market_relay_`, base units (seconds, bytes), `_total` for counters. Counters follow RelayEvents and
 * the upstream client's request events; gauges read the relay's current state at scrape time, so they
 * can never drift from it. Each relay gets its own Registry (process metrics included), so that
 * several relays in one process do not clash.
 */

import { Counter, collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import { type Channel, channels } from '../../packages/protocol/src/protocol/messages.ts';
import { type ChannelEventMap, channelEvents } from '../relay/channels/relay-registry.ts';
import { refusalReasons } from '../relay/events.ts';
import type { UpstreamRequestEvent } from '../upstream/client.ts';
import { metricFactory } from '../util/metric-factory.ts';
import { version } from '../util/version.ts';
import { EVENT_LOOP_METRICS, registerEventLoopDelay } from './event-loop-delay.ts';
import { healthReport } from './health-report.ts';
import { registerHistoryMetrics } from './history-metrics.ts';
import { onRelayEvent, type RelayView } from './relay-view.ts';
import { registerReplayMetrics } from './replay-metrics.ts';
import { shareReport } from './share-report.ts';

const PREFIX = 'market_relay_';
/** Longer than any timer's (2^31 - 1 ms, about 24 days). */
const NEVER_MS = 2 ** 31 - 1;
/** Share groups the metrics name by rank. */
const METRIC_TOP_GROUPS = 5;

/** Upstream round trips: a few ms on a LAN to the 5 s timeout. */
const UPSTREAM_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Poll response to last send is in-process work: sub-millisecond to a congested event loop. */
const FANOUT_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];
/** From a busy book's fraction of a second to well past the default 30 s maximum age. */
const CONFIRMATION_AGE_BUCKETS = [0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 45, 60, 120];

export interface RelayMetrics {
  readonly registry: Registry;
  /** Stops following the relay's events and probing the event loop. */
  close(): void;
}

export function createRelayMetrics(view: RelayView): RelayMetrics {
  const registry = new Registry();
  // prom-client always starts its event-loop monitor: given a period it never reaches, and its
  // metrics replaced by a probe that samples less often while the loop is idle (event-loop-delay.ts).
  collectDefaultMetrics({ register: registry, prefix: PREFIX, eventLoopMonitoringPrecision: NEVER_MS });
  for (const name of EVENT_LOOP_METRICS) registry.removeSingleMetric(`${PREFIX}${name}`);
  const eventLoop = registerEventLoopDelay(PREFIX, registry);
  // Gauges named like counters, which `promtool check metrics` rejects; the `nodejs_active_*`
  // gauges without the suffix carry the same counts by type.
  for (const name of ['active_handles_total', 'active_requests_total', 'active_resources_total']) {
    registry.removeSingleMetric(`${PREFIX}nodejs_${name}`);
  }
  const registers = [registry];
  const metric = metricFactory(PREFIX, registry);

  new Gauge({
    name: `${PREFIX}info`,
    help: 'Always 1; the version label says which relay build is running.',
    labelNames: ['version'],
    registers,
  }).set({ version }, 1);
  if (view.history !== undefined) registerHistoryMetrics(PREFIX, registry, metric, view.history);
  if (view.replays !== undefined) registerReplayMetrics(PREFIX, registry, metric, view.replays);

  // --- Clients -----------------------------------------------------------------------------------
  metric.gauge('connections', 'Open WebSocket connections.', (gauge) => {
    gauge.set(view.ws.connections.size);
  });
  const connectionsClosed = metric.counter(
    'connections_closed_total',
    'WebSocket connections closed, by close code and by who closed (relay: 1001 shutdown, 4008 slow consumer, ...; client).',
    ['code', 'by'],
  );
  metric.gauge(
    'subscriptions',
    'Subscriptions (connection x stream), by channel.',
    (gauge) => {
      const counts = countByChannel();
      for (const stream of view.registry.streams()) counts[stream.channel] += stream.clientCount;
      for (const channel of channels) gauge.set({ channel }, counts[channel]);
    },
    ['channel'],
  );
  const connectionsRefused = metric.counter(
    'connections_refused_total',
    'Connections the edge turned away, by reason (docs/operations.md "Refusals": auth, auth_lockout, origin, rate, address, key, global, pending_address, pending_shed).',
    ['reason'],
  );
  for (const reason of refusalReasons) connectionsRefused.inc({ reason }, 0);
  metric.gauge(
    'log_lines_dropped',
    'Log lines dropped since start because the log destination was full, slow or gone.',
    (gauge) => gauge.set(view.logSink?.droppedLines ?? 0),
  );
  const requestErrors = metric.counter(
    'client_request_errors_total',
    'Client requests answered with an error, by protocol error code.',
    ['code'],
  );

  // --- Streams and polling -----------------------------------------------------------------------
  metric.gauge(
    'streams',
    'Streams held (polled), by channel and freshness (live or stale).',
    (gauge) => {
      const live = countByChannel();
      const stale = countByChannel();
      for (const stream of view.registry.streams()) {
        if (stream.freshness === 'live') live[stream.channel] += 1;
        else if (stream.freshness === 'stale') stale[stream.channel] += 1;
      }
      for (const channel of channels) {
        gauge.set({ channel, state: 'live' }, live[channel]);
        gauge.set({ channel, state: 'stale' }, stale[channel]);
      }
    },
    ['channel', 'state'],
  );
  const stateChanges = metric.counter(
    'stream_state_changes_total',
    'Stream freshness transitions, by channel and new state (live, stale, closed).',
    ['channel', 'state'],
  );
  metric.gauge(
    'resume_buffer_bytes',
    "Bytes held by streams' resume rings (--resume-buffer), by channel: memory outside V8's heap, in the process's resident size but not in its heap metrics.",
    (gauge) => {
      const bytes = countByChannel();
      for (const stream of view.registry.streams()) bytes[stream.channel] += stream.resumeBufferBytes;
      for (const channel of channels) gauge.set({ channel }, bytes[channel]);
    },
    ['channel'],
  );
  metric.gauge(
    'polled_markets',
    "Poll targets, by channel: markets, feeds or whole maps polled upstream, one request each per poll (price: batches of 100; a channel served by another's requests counts that one's targets).",
    (gauge) => {
      for (const kind of channels) gauge.set({ kind }, view.poller.targetCount(kind));
    },
    ['kind'],
  );
  metric.gauge(
    'share_groups',
    'Client address groups (IPv6 by prefix) or API keys holding at least one poll target, each with an equal share of the polling budget (docs/scheduler.md "Fair share").',
    (gauge) => gauge.set(view.poller.shares().length),
  );
  metric.gauge(
    'share_top',
    'The heaviest share groups by rank (1 = heaviest, up to 5), never by address: part (0..1) of the polling budget each paid for over the last seconds (`what="share"`) and poll targets it holds (`what="targets"`).',
    (gauge) => {
      gauge.reset(); // a rank no group holds any more is not reported
      for (const [index, row] of shareReport(view.poller.shares(), METRIC_TOP_GROUPS).top.entries()) {
        gauge.set({ rank: String(index + 1), what: 'share' }, row.share);
        gauge.set({ rank: String(index + 1), what: 'targets' }, row.targets);
      }
    },
    ['rank', 'what'],
  );
  metric.gauge(
    'poll_interval_configured_seconds',
    'Configured poll interval per market, by kind.',
    (gauge) => {
      const configured = { book: view.bookPollMs, price: view.pricePollMs };
      for (const [kind, ms] of Object.entries(configured)) gauge.set({ kind }, ms / 1000);
    },
    ['kind'],
  );
  metric.gauge(
    'poll_interval_effective_seconds',
    'Mean time between requests per poll target, by kind, measured from when requests actually started (budget, scheduler and CPU lag included).',
    (gauge) => {
      const { effectiveIntervalMs } = view.poller.freshness();
      const { bookIntervalMs, priceIntervalMs } = view.poller.intervals;
      // A kind with no measured gap yet shows the interval its polls are planned at.
      const planned = { book: bookIntervalMs, price: priceIntervalMs };
      for (const [kind, ms] of Object.entries(planned))
        gauge.set({ kind }, (effectiveIntervalMs[kind as keyof typeof planned] ?? ms) / 1000);
    },
    ['kind'],
  );
  metric.gauge(
    'polls_per_second',
    'Upstream polls per second: requested (what the configured intervals ask), budget (90% of --upstream-rps), achieved (started, last 5 s).',
    (gauge) => {
      const { requested, budget, achieved } = view.poller.freshness().pollsPerSecond;
      gauge.set({ which: 'requested' }, requested);
      gauge.set({ which: 'budget' }, budget);
      gauge.set({ which: 'achieved' }, achieved);
    },
    ['which'],
  );
  metric.gauge(
    'max_age_kept',
    '1 while every stream is confirmed within --max-age-ms and the budget can keep it so, else 0.',
    (gauge) => {
      gauge.set(view.poller.freshness().maxAgeKept ? 1 : 0);
    },
  );
  metric.gauge(
    'confirmation_age_max_seconds',
    'Age of the oldest confirmation of any polled target now.',
    (gauge) => {
      gauge.set(view.poller.freshness().oldestAgeMs / 1000);
    },
  );
  const confirmationAge = metric.histogram(
    'confirmation_age_seconds',
    "How old a poll target's previous confirmation had grown when upstream confirmed it again, by kind.",
    CONFIRMATION_AGE_BUCKETS,
    ['kind'],
  );
  const polls = metric.counter(
    'polls_total',
    'Upstream polls finished, by kind and outcome (ok, error, not_found).',
    ['kind', 'outcome'],
  );
  // Each channel's poll events, counted under the names it gives them.
  const channelCounters = (Object.keys(channelEvents) as Array<keyof ChannelEventMap>).map((name) => {
    const { name: counterName, help } = channelEvents[name].counter;
    return { name, counter: metric.counter(counterName, help) };
  });

  // --- Fan-out -----------------------------------------------------------------------------------
  const messagesSent = metric.counter(
    'stream_messages_sent_total',
    'Snapshots and updates fanned out after polls, counted once per receiving connection.',
    ['channel', 'type'],
  );
  const bytesSent = metric.counter(
    'stream_sent_bytes_total',
    'Bytes of the messages counted by stream_messages_sent_total, as JSON frames (JSON frame size x receivers): an upper bound, as compact and permessage-deflate connections receive fewer.',
    ['channel'],
  );
  const pollToSend = metric.histogram(
    'poll_to_send_seconds',
    "Time from an upstream poll response to the write to the last subscriber's connection.",
    FANOUT_BUCKETS,
    ['channel'],
  );
  const conflations = metric.counter(
    'conflations_total',
    'Times a slow connection drained and its held-back streams were resent as snapshots.',
  );
  const conflatedStreams = metric.counter(
    'conflated_streams_total',
    'Streams resent as one fresh snapshot by conflations.',
  );
  const slowConsumerCloses = metric.counter(
    'slow_consumer_closes_total',
    'Connections closed with 4008 because they could not keep up.',
  );

  // --- Upstream ----------------------------------------------------------------------------------
  const upstreamRequests = metric.counter(
    'upstream_requests_total',
    'Upstream request attempts, by endpoint and outcome (ok, http_error, timeout, network_error, decode_error, invalid_json, schema_error, rate_limited).',
    ['endpoint', 'outcome'],
  );
  const upstreamBytes = metric.counter(
    'upstream_response_bytes_total',
    'Bytes of upstream response bodies as received (compressed, when upstream compressed them), by endpoint.',
    ['endpoint'],
  );
  const upstreamDuration = metric.histogram(
    'upstream_request_duration_seconds',
    'Duration of each upstream request attempt (send to validated body), by endpoint.',
    UPSTREAM_BUCKETS,
    ['endpoint'],
  );
  metric.gauge('upstream_requests_in_flight', 'Upstream requests running now.', (gauge) => {
    gauge.set(view.client.load().inFlight);
  });
  metric.gauge(
    'upstream_requests_queued',
    'Upstream requests waiting for the concurrency or rate cap.',
    (gauge) => {
      gauge.set(view.client.load().queued);
    },
  );
  metric.gauge(
    'upstream_up',
    '1 while upstream answered, as upstream, within upstreamDownAfterMs (what /health reports), else 0.',
    (gauge) => {
      const { upstream } = healthReport(view);
      // A misconfigured address answers (reachable) but is not upstream: down all the same.
      gauge.set(upstream.reachable && upstream.identity !== 'mismatch' ? 1 : 0);
    },
  );
  metric.gauge(
    'upstream_rate_limit_rps',
    "Requests per second the relay holds itself to after upstream's 429s (rate_limited outcomes); 0 while not lowered.",
    (gauge) => {
      gauge.set(view.poller.rateLimitRps ?? 0);
    },
  );
  metric.gauge(
    'upstream_error_ratio',
    'Failed / all of the last 100 upstream request attempts (0..1).',
    (gauge) => {
      gauge.set(view.upstream.snapshot().errorRate);
    },
  );

  // --- Cluster mode (--redis): the broker's gauges about itself; a relay alone has none -----------
  for (const { name, help, value } of view.broker.gauges())
    metric.gauge(name, help, (gauge) => {
      gauge.set(value());
    });
  for (const { name, help, label, values } of view.broker.counters())
    new Counter({
      name: `${PREFIX}${name}`,
      help,
      labelNames: [label],
      registers,
      // Counted by the broker: the counter shows its counts as they are at the scrape.
      collect() {
        this.reset();
        for (const [value, count] of values()) this.inc({ [label]: value }, count);
      },
    });

  const { events } = view;
  const unsubscribers = [
    onRelayEvent(events, 'connection:close', ({ code, by }) =>
      connectionsClosed.inc({ code: String(code), by }),
    ),
    onRelayEvent(events, 'request:error', ({ code }) => requestErrors.inc({ code })),
    onRelayEvent(events, 'edge:refused', ({ reason }) => connectionsRefused.inc({ reason })),
    onRelayEvent(events, 'stream:state', ({ channel, state }) => stateChanges.inc({ channel, state })),
    onRelayEvent(events, 'poll:done', ({ kind, outcome }) => polls.inc({ kind, outcome })),
    ...channelCounters.map(({ name, counter }) => onRelayEvent(events, name, () => counter.inc())),
    onRelayEvent(events, 'poll:confirmed', ({ kind, ageMs }) =>
      confirmationAge.observe({ kind }, ageMs / 1000),
    ),
    onRelayEvent(events, 'stream:sent', ({ channel, kind, subscribers, bytes, sinceReceiptMs }) => {
      messagesSent.inc({ channel, type: kind }, subscribers);
      bytesSent.inc({ channel }, bytes * subscribers);
      pollToSend.observe({ channel }, sinceReceiptMs / 1000);
    }),
    onRelayEvent(events, 'connection:conflated', ({ streams }) => {
      conflations.inc();
      conflatedStreams.inc(streams);
    }),
    onRelayEvent(events, 'connection:slow-consumer', () => slowConsumerCloses.inc()),
  ];
  const onRequest = ({ endpoint, outcome, durationMs, bytes }: UpstreamRequestEvent) => {
    upstreamRequests.inc({ endpoint, outcome });
    if (bytes !== undefined) upstreamBytes.inc({ endpoint }, bytes);
    upstreamDuration.observe({ endpoint }, durationMs / 1000);
  };
  view.client.events.on('request', onRequest);

  return {
    registry,
    close() {
      eventLoop.close();
      for (const unsubscribe of unsubscribers) unsubscribe();
      view.client.events.off('request', onRequest);
    },
  };
}

function countByChannel(): Record<Channel, number> {
  return Object.fromEntries(channels.map((channel) => [channel, 0])) as Record<Channel, number>;
}
