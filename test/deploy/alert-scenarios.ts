/**
 * @module test/deploy/alert-scenarios
 * The alert rules of deploy/prometheus/ as `promtool test rules` unit tests: for each alert, the
 * series of one relay in the trouble it names, and the alert expected to fire; and one healthy
 * relay for which none may fire. Series are in promtool's expanding notation (`0+60x15`: from
 * 0, up 60 a minute, 15 minutes).
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

/** Each alert's trouble, as input series. */
const TROUBLE: Record<string, ReturnType<typeof series>[]> = {
  MarketRelayStaleStreams: [series('market_relay_streams', { channel: 'book', state: 'stale' }, '2x15')],
  MarketRelayMaxAgeNotKept: [series('market_relay_max_age_kept', {}, '0x15')],
  MarketRelayUpstreamDown: [series('market_relay_upstream_up', {}, '0x15')],
  MarketRelayUpstreamErrors: [requests('ok', 60), requests('timeout', 10)],
  // 429s alone are the rate-limit alert's, not counted as errors.
  MarketRelayUpstreamRateLimited: [requests('ok', 60), requests('rate_limited', 5)],
  MarketRelayBudgetExhausted: pollsPerSecond(60, 45),
  MarketRelaySlowConsumersClosed: [series('market_relay_slow_consumer_closes_total', {}, '0 0 0 0 0 1x10')],
  MarketRelayRedisDown: [series('market_relay_redis_up', {}, '0x15')],
};

const HEALTHY = [
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
];

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
        name: 'upstream 429s are not errors',
        interval: '1m',
        input_series: TROUBLE.MarketRelayUpstreamRateLimited,
        alert_rule_test: [{ eval_time: evalTime, alertname: 'MarketRelayUpstreamErrors', exp_alerts: [] }],
      },
    ],
  };
}

/** The alerts these scenarios cover, to hold them to the rule files'. */
export const coveredAlerts = Object.keys(TROUBLE);
