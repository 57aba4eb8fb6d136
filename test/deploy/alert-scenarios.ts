/**
 * @module test/deploy/alert-scenarios
 * The alert rules of deploy/prometheus/ as `promtool test rules` unit tests: for each alert, the
 * series of one relay in the trouble it names, and the alert expected to fire; and one healthy
 * relay for which none may fire; and a relay that dies in trouble, for which the trouble's alert
 * must hold while MarketRelayDown fires. Series are in promtool's expanding notation (`0+60x15`:
 * from 0, up 60 a minute, 15 minutes; `stale`: the staleness marker a failed scrape writes).
 */

const RELAY = { job: 'market-relay', instance: 'relay-a' };

function series(metric: string, labels: Record<string, string>, values: string) {
  const all = { ...RELAY, ...labels };
  const matchers = Object.entries(all).map(([name, value]) => `${name}="${value}"`);
  return { series: `${metric}{${matchers.join(',')}}`, values };
}

const requests = (outcome: string, perMinute: number) =>
  series('market_relay_upstream_requests_total', { endpoint: 'book', outcome }, `0+${perMinute}x15`);
const pollsPerSecond = (requested: number, budget: number) => [
  series('market_relay_polls_per_second', { which: 'requested' }, `${requested}x15`),
  series('market_relay_polls_per_second', { which: 'budget' }, `${budget}x15`),
];

const GIB = 1024 ** 3;
/** The record's reach (oldest record's age) and fill (part of --history-max-bytes) against a 24 h retention. */
const historyReach = (oldestAgeSeconds: number, fill: number) => [
  series('market_relay_history_oldest_record_age_seconds', {}, `${oldestAgeSeconds}+60x40`),
  series('market_relay_history_retention_seconds', {}, `${24 * 3600}x40`),
  series('market_relay_history_max_bytes', {}, `${GIB}x40`),
  series('market_relay_history_stored_bytes', {}, `${Math.round(fill * GIB)}x40`),
];

/** Prometheus' own series of the relay's scrape target: 1 scraped, 0 not. */
const up = (values: string) => series('up', {}, values);

/** Each alert's trouble, as input series. */
const TROUBLE: Record<string, ReturnType<typeof series>[]> = {
  MarketRelayDown: [up('1x5 0x10')],
  MarketRelayStaleStreams: [series('market_relay_streams', { channel: 'book', state: 'stale' }, '2x15')],
  MarketRelayMaxAgeNotKept: [series('market_relay_max_age_kept', {}, '0x15')],
  MarketRelayUpstreamDown: [series('market_relay_upstream_up', {}, '0x15')],
  MarketRelayUpstreamErrors: [requests('ok', 60), requests('timeout', 10)],
  // 429s alone are the rate-limit alert's, not counted as errors.
  MarketRelayUpstreamRateLimited: [requests('ok', 60), requests('rate_limited', 5)],
  MarketRelayBudgetExhausted: pollsPerSecond(60, 45),
  MarketRelaySlowConsumersClosed: [series('market_relay_slow_consumer_closes_total', {}, '0 0 0 0 0 1x10')],
  MarketRelayRedisDown: [series('market_relay_redis_up', {}, '0x15')],
  MarketRelayHistoryNotRecording: [series('market_relay_history_write_failing', {}, '0x5 1x10')],
  MarketRelayHistoryWriteLag: [series('market_relay_history_write_lag_seconds', {}, '2x5 45x10')],
  // At its 1 GiB limit with 6 h of a 24 h retention: the size cuts the record short.
  MarketRelayHistoryShort: historyReach(6 * 3600, 1.0),
  // The shared engine away for 10 minutes.
  MarketRelayHistoryStoreDown: [series('market_relay_history_store_up', {}, '1x5 0x10')],
};

const HEALTHY = [
  up('1x15'),
  series('market_relay_streams', { channel: 'book', state: 'stale' }, '0x15'),
  series('market_relay_streams', { channel: 'book', state: 'live' }, '5x15'),
  series('market_relay_max_age_kept', {}, '1x15'),
  series('market_relay_upstream_up', {}, '1x15'),
  requests('ok', 60),
  requests('timeout', 0),
  requests('rate_limited', 0),
  ...pollsPerSecond(10, 45),
  series('market_relay_slow_consumer_closes_total', {}, '0x15'),
  series('market_relay_redis_up', {}, '1x15'),
  series('market_relay_history_write_failing', {}, '0x15'),
  series('market_relay_history_messages_dropped_total', {}, '0x15'),
  series('market_relay_history_write_lag_seconds', {}, '2x15'),
  // A young store, far from its limit: a short reach is only its age.
  ...historyReach(600, 0.1),
  series('market_relay_history_store_up', {}, '1x15'),
];

/**
 * The alerts on the relay's own metrics that must outlive it: the relay reports the trouble for 5
 * minutes, then its scrapes fail (`up` 0, its series marked stale) for the 10 left.
 */
const HELD: Record<string, ReturnType<typeof series>> = {
  MarketRelayStaleStreams: series('market_relay_streams', { channel: 'book', state: 'stale' }, '2x5 stale'),
  MarketRelayMaxAgeNotKept: series('market_relay_max_age_kept', {}, '0x5 stale'),
  MarketRelayUpstreamDown: series('market_relay_upstream_up', {}, '0x5 stale'),
};

/** Scenarios beyond one per alert: what the relay's death and return, and its absence, do. */
function lifecycleTests(severities: Record<string, string>) {
  const expected = (alert: string) => [{ exp_labels: { ...RELAY, severity: severities[alert] } }];
  const dies = up('1x5 0x10');
  return [
    ...Object.entries(HELD).map(([alert, trouble]) => ({
      name: `${alert} holds while the relay is down`,
      interval: '1m',
      input_series: [dies, trouble],
      alert_rule_test: [
        { eval_time: '12m', alertname: alert, exp_alerts: expected(alert) },
        { eval_time: '12m', alertname: 'MarketRelayDown', exp_alerts: expected('MarketRelayDown') },
      ],
    })),
    {
      // Down 3 minutes, then back with the trouble gone: the held alerts end, the down alert too.
      name: 'a relay that comes back healthy',
      interval: '1m',
      input_series: [
        up('1x5 0x2 1x7'),
        series('market_relay_streams', { channel: 'book', state: 'stale' }, '2x5 stale _x2 0x7'),
        series('market_relay_max_age_kept', {}, '0x5 stale _x2 1x7'),
        series('market_relay_upstream_up', {}, '0x5 stale _x2 1x7'),
      ],
      alert_rule_test: ['MarketRelayDown', ...Object.keys(HELD)].map((alert) => ({
        eval_time: '12m',
        alertname: alert,
        exp_alerts: [],
      })),
    },
    {
      // Only another job's targets: no `up` of the relays' job at all (a lost scrape config).
      name: 'no relay scraped',
      interval: '1m',
      input_series: [{ series: 'up{job="other",instance="x"}', values: '1x15' }],
      alert_rule_test: [
        {
          eval_time: '12m',
          alertname: 'MarketRelayDown',
          exp_alerts: [{ exp_labels: { job: RELAY.job, severity: severities.MarketRelayDown } }],
        },
      ],
    },
  ];
}

/**
 * promtool's unit-test file for `rules` (a rule file's path, its annotations removed: promtool
 * compares them too, and they are prose). `severities`: each alert's `severity` label.
 */
export function alertUnitTests(rules: string, severities: Record<string, string>) {
  const evalTime = '12m';
  const expected = (alert: string) => [{ exp_labels: { ...RELAY, severity: severities[alert] } }];
  return {
    rule_files: [rules],
    evaluation_interval: '1m',
    tests: [
      ...Object.entries(TROUBLE).map(([alert, input]) => ({
        name: alert,
        interval: '1m',
        input_series: input,
        alert_rule_test: [{ eval_time: evalTime, alertname: alert, exp_alerts: expected(alert) }],
      })),
      {
        name: 'a healthy relay',
        interval: '1m',
        input_series: HEALTHY,
        alert_rule_test: Object.keys(TROUBLE).map((alert) => ({
          eval_time: evalTime,
          alertname: alert,
          exp_alerts: [],
        })),
      },
      {
        // Writes succeed again, but messages were lost to the buffer bound: still a hole.
        name: 'history messages dropped',
        interval: '1m',
        input_series: [
          series('market_relay_history_write_failing', {}, '0x15'),
          series('market_relay_history_messages_dropped_total', {}, '0x5 200+100x10'),
        ],
        alert_rule_test: [
          {
            eval_time: evalTime,
            alertname: 'MarketRelayHistoryNotRecording',
            exp_alerts: expected('MarketRelayHistoryNotRecording'),
          },
        ],
      },
      {
        // A full store whose record reaches back most of the retention: as configured.
        name: 'a full store that keeps the retention',
        interval: '1m',
        input_series: historyReach(20 * 3600, 1.0),
        alert_rule_test: [{ eval_time: '40m', alertname: 'MarketRelayHistoryShort', exp_alerts: [] }],
      },
      {
        // The shared engine away for a minute (a restart, a fail-over): the gap is marked in the
        // record, and nobody is paged.
        name: 'a brief history store outage',
        interval: '1m',
        input_series: [series('market_relay_history_store_up', {}, '1x5 0 1x9')],
        alert_rule_test: [{ eval_time: '7m', alertname: 'MarketRelayHistoryStoreDown', exp_alerts: [] }],
      },
      {
        name: 'upstream 429s are not errors',
        interval: '1m',
        input_series: TROUBLE.MarketRelayUpstreamRateLimited,
        alert_rule_test: [{ eval_time: evalTime, alertname: 'MarketRelayUpstreamErrors', exp_alerts: [] }],
      },
      ...lifecycleTests(severities),
    ],
  };
}

/** The alerts these scenarios cover, to hold them to the rule files'. */
export const coveredAlerts = Object.keys(TROUBLE);
