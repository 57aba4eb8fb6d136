/**
 * The operator's kit in deploy/ (docs/operations.md "Operator's kit"): Prometheus accepts the
 * alert rules and the compose files' Prometheus configs, each alert fires in its scenario
 * (alert-scenarios.ts, a dead relay's included), every dashboard query and every alert expression
 * names only metrics a live relay in cluster mode exports (or Prometheus' `up`), and every file
 * the compose files mount exists, but the operator key file the operator writes.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { type Relay, startRelay } from '../../src/relay-server.ts';
import { type SimulatorHandle, startSimulator } from '../../src/sim/server.ts';
import { redisAvailable, useRedis } from '../support/cluster/redis.ts';
import { promtoolPath, runPromtoolTests } from '../support/promtool.ts';
import { alertUnitTests, coveredAlerts } from './alert-scenarios.ts';

const run = promisify(execFile);
const DEPLOY = fileURLToPath(new URL('../../deploy/', import.meta.url));
const RULES = join(DEPLOY, 'prometheus');
const DASHBOARD = join(DEPLOY, 'grafana', 'market-relay.json');
const COMPOSE = join(DEPLOY, 'compose.yaml');
const COMPOSE_OPERATOR_KEY = join(DEPLOY, 'compose.operator-key.yaml');
const PROMETHEUS_CONFIG = join(DEPLOY, 'compose', 'prometheus.yml');
const PROMETHEUS_CONFIG_WITH_KEY = join(DEPLOY, 'compose', 'prometheus-operator-key.yml');
/** The key file compose.operator-key.yaml mounts: the operator creates it, git ignores it. */
const OPERATOR_KEY_FILE = './compose/operator-key';

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
interface ComposeFile {
  services: Record<string, { volumes?: string[]; build?: { context: string } }>;
}
interface ScrapeJob {
  job_name: string;
  authorization?: { credentials_file: string };
}
interface PrometheusConfig {
  scrape_configs: ScrapeJob[];
}
interface RuleFile {
  groups: { name: string; rules: Rule[] }[];
}

function ruleFiles(): string[] {
  return readdirSync(RULES)
    .filter((name) => name.endsWith('.yml'))
    .map((name) => join(RULES, name));
}

function alertRules(): (Rule & { alert: string })[] {
  return ruleFiles().flatMap((file) =>
    (parse(readFileSync(file, 'utf8')) as RuleFile).groups.flatMap((group) =>
      group.rules.map((rule) => ({ ...rule, alert: rule.alert ?? rule.record ?? '' })),
    ),
  );
}

/** Every PromQL query of the dashboard: panel targets and the variables' queries. */
function dashboardQueries(): string[] {
  const queries: string[] = [];
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(visit);
    else if (typeof node === 'object' && node !== null) {
      for (const [key, value] of Object.entries(node)) {
        if ((key === 'expr' || key === 'definition') && typeof value === 'string') queries.push(value);
        else visit(value);
      }
    }
  };
  visit(JSON.parse(readFileSync(DASHBOARD, 'utf8')));
  return queries;
}

function stripAnnotations({ annotations: _prose, ...rule }: Rule): Rule {
  return rule;
}

/** PromQL's keywords; any other bare word that is not a function call is a metric name. */
const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'by', 'without']);

/** Series Prometheus writes itself for every scrape target, not the relay. */
const SCRAPE_SERIES = new Set(['up']);

/**
 * The metric names a PromQL expression reads: strings, label matchers, ranges and grouping
 * clauses removed, then every word not followed by `(` (a function) and not a keyword. Grafana's
 * `label_values(metric, label)` reads its metric only.
 */
function metricNamesIn(expr: string): string[] {
  const bare = expr
    .replace(/label_values\(([^,)]+)(,[^)]*)?\)/g, '$1')
    .replace(/"(?:[^"\\]|\\.)*"/g, '')
    .replace(/\{[^}]*\}/g, '')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '');
  return [...bare.matchAll(/\b[A-Za-z_:][\w:]*\b(?!\s*\()/g)]
    .map((match) => match[0])
    .filter((word) => !KEYWORDS.has(word));
}

/** The series names a scrape can hold: each family's name, and a histogram's or summary's parts. */
function exportedNames(scrape: string): Set<string> {
  const names = new Set<string>();
  for (const [, name, type] of scrape.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(name!);
    if (type === 'histogram') for (const part of ['_bucket', '_sum', '_count']) names.add(name! + part);
    if (type === 'summary') for (const part of ['_sum', '_count']) names.add(name! + part);
  }
  return names;
}

describe('the operator kit', () => {
  it('reads metric names out of PromQL', () => {
    expect(
      metricNamesIn(
        'sum by (job, instance) (rate(a_total{outcome=~"x|y"}[5m])) / ignoring (which) b{which="c"} > 0.05',
      ),
    ).toEqual(['a_total', 'b']);
    expect(metricNamesIn('label_values(market_relay_info, instance)')).toEqual(['market_relay_info']);
    expect(metricNamesIn('histogram_quantile(0.99, sum by (le) (rate(h_bucket[$__rate_interval])))')).toEqual(
      ['h_bucket'],
    );
  });

  it('has the alerts operators need, each with a scenario in which it fires', () => {
    expect(alertRules().map((rule) => rule.alert)).toEqual(coveredAlerts);
    expect(alertRules().map((rule) => rule.alert)).toEqual(
      expect.arrayContaining([
        'MarketRelayDown',
        'MarketRelayStaleStreams',
        'MarketRelayUpstreamErrors',
        'MarketRelayUpstreamRateLimited',
        'MarketRelayBudgetExhausted',
        'MarketRelaySlowConsumersClosed',
        'MarketRelayRedisDown',
        'MarketRelayHistoryNotRecording',
      ]),
    );
  });

  it('mounts only files that exist, but the operator key file the operator creates', () => {
    const sources = [COMPOSE, COMPOSE_OPERATOR_KEY].flatMap((file) =>
      Object.values((parse(readFileSync(file, 'utf8')) as ComposeFile).services).flatMap((service) => [
        ...(service.volumes ?? []).map((volume) => volume.split(':')[0]!),
        ...(service.build === undefined ? [] : [service.build.context]),
      ]),
    );
    expect(sources).toContain(OPERATOR_KEY_FILE);
    const missing = sources.filter(
      (source) => source !== OPERATOR_KEY_FILE && !existsSync(resolve(DEPLOY, source)),
    );
    expect(missing).toEqual([]);
    const ignored = readFileSync(join(DEPLOY, '..', '.gitignore'), 'utf8').split('\n');
    expect(ignored).toContain(`deploy/${OPERATOR_KEY_FILE.slice(2)}`);
  });

  it('uses no top-level key docker-compose 1.29 rejects (such as `name`)', () => {
    for (const file of [COMPOSE, COMPOSE_OPERATOR_KEY]) {
      const keys = Object.keys(parse(readFileSync(file, 'utf8')) as object);
      expect(
        keys.filter((key) => !key.startsWith('x-') && key !== 'services'),
        file,
      ).toEqual([]);
    }
  });

  it('gives Prometheus the same scrape job with the operator key file the override mounts', () => {
    const plain = parse(readFileSync(PROMETHEUS_CONFIG, 'utf8')) as PrometheusConfig;
    const withKey = parse(readFileSync(PROMETHEUS_CONFIG_WITH_KEY, 'utf8')) as PrometheusConfig;
    const keyFile = withKey.scrape_configs[0]?.authorization?.credentials_file;
    expect(keyFile).toBeDefined();
    expect({
      ...withKey,
      scrape_configs: withKey.scrape_configs.map(({ authorization: _key, ...job }) => job),
    }).toEqual(plain);
    const prometheus = (parse(readFileSync(COMPOSE_OPERATOR_KEY, 'utf8')) as ComposeFile).services.prometheus;
    expect(prometheus?.volumes).toEqual(
      expect.arrayContaining([
        `${OPERATOR_KEY_FILE}:${keyFile}:ro`,
        './compose/prometheus-operator-key.yml:/etc/prometheus/prometheus.yml:ro',
      ]),
    );
  });

  describe.skipIf(!runPromtoolTests)('promtool', () => {
    it('accepts the alert rules and the compose Prometheus config', async () => {
      const rules = await run(promtoolPath ?? 'promtool', ['check', 'rules', ...ruleFiles()]);
      expect(rules.stdout).toContain('SUCCESS');
      const config = await run(promtoolPath ?? 'promtool', ['check', 'config', PROMETHEUS_CONFIG]);
      expect(config.stdout).toContain('SUCCESS');
    });

    it('accepts the operator-key Prometheus config, its key file where it would be mounted', async () => {
      const work = mkdtempSync(join(tmpdir(), 'market-relay-prometheus-'));
      try {
        const config = parse(readFileSync(PROMETHEUS_CONFIG_WITH_KEY, 'utf8')) as PrometheusConfig;
        writeFileSync(join(work, 'operator-key'), 'an-operator-key-of-32-characters\n');
        for (const job of config.scrape_configs) {
          if (job.authorization) job.authorization.credentials_file = join(work, 'operator-key');
        }
        writeFileSync(join(work, 'prometheus.yml'), stringify(config));
        const checked = await run(promtoolPath ?? 'promtool', [
          'check',
          'config',
          join(work, 'prometheus.yml'),
        ]);
        expect(checked.stdout).toContain('SUCCESS');
      } finally {
        rmSync(work, { recursive: true, force: true });
      }
    });

    it('fires each alert in its trouble and none for a healthy relay (promtool test rules)', async () => {
      const work = mkdtempSync(join(tmpdir(), 'market-relay-alerts-'));
      try {
        const rules = alertRules();
        const withoutProse = { groups: [{ name: 'market-relay', rules: rules.map(stripAnnotations) }] };
        writeFileSync(join(work, 'rules.yml'), stringify(withoutProse));
        const severities = Object.fromEntries(rules.map((rule) => [rule.alert, rule.labels?.severity ?? '']));
        writeFileSync(join(work, 'tests.yml'), stringify(alertUnitTests('rules.yml', severities)));
        const result = await run(promtoolPath ?? 'promtool', [
          'test',
          'rules',
          join(work, 'tests.yml'),
        ]).catch((error: { stdout: string; stderr: string }) => ({ stdout: error.stdout + error.stderr }));
        expect(result.stdout).toContain('SUCCESS');
        expect(result.stdout).not.toContain('FAILED');
      } finally {
        rmSync(work, { recursive: true, force: true });
      }
    });
  });

  describe.skipIf(!redisAvailable())('against a relay in cluster mode', () => {
    const redis = useRedis();
    let sim: SimulatorHandle;
    let relay: Relay;
    let exported: Set<string>;
    // Recording on, so that the history metrics the history alerts read are exported too.
    const dataDir = mkdtempSync(join(tmpdir(), 'market-relay-kit-history-'));

    beforeAll(async () => {
      sim = await startSimulator({ markets: 2, tickMs: 0 });
      relay = await startRelay(
        {
          port: 0,
          host: '127.0.0.1',
          upstream: sim.url,
          redis: redis.server.url,
          bookPollMs: 1000,
          pricePollMs: 1000,
          upstreamConcurrency: 4,
          upstreamRps: 50,
          logLevel: 'silent',
          simMarkets: 2,
          simSeed: 1,
          history: { store: 'embedded', dataDir, retentionMs: 3_600_000, maxBytes: 1024 ** 3 },
        },
        pino({ level: 'silent' }),
      );
      exported = exportedNames(await (await fetch(`${relay.url}/metrics`)).text());
    });

    afterAll(async () => {
      await relay?.close();
      await sim?.close();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('scrapes the cluster metrics', () => {
      expect(exported).toContain('market_relay_redis_up');
      expect(exported).toContain('market_relay_upstream_requests_total');
      expect(exported).toContain('market_relay_history_write_failing');
    });

    it.each([
      ['dashboard query', dashboardQueries()],
      ['alert expression', alertRules().map((rule) => rule.expr)],
    ])('every %s names only metrics the relay exports', (_kind, expressions) => {
      expect(expressions.length).toBeGreaterThan(0);
      for (const expr of expressions) {
        const names = metricNamesIn(expr);
        expect(names, expr).not.toEqual([]);
        expect(
          names.filter((name) => !exported.has(name) && !SCRAPE_SERIES.has(name)),
          expr,
        ).toEqual([]);
      }
    });
  });
});
