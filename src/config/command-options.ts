/**
 * @module config/command-options
 * Every option of `market-relay serve` and `sim`, declared (config/option-spec.ts): its flag, its
 * environment twin, its schema, default and help. The declarations are this module's one job;
 * reading argv and the environment against them is config/config.ts, the help and the docs' table
 * are help.ts and options-table.ts.
 */
import { availableParallelism } from 'node:os';
import { z } from 'zod';
import { groupOptions } from './group-options.ts';
import { historyOptions } from './history-options.ts';
import { integerOption, type OptionSpec } from './option-spec.ts';
import { pollOptions } from './poll-options.ts';
import { MARKETS_OPTION, markets, seed, simProfile } from './sim-options.ts';
import { traceOptions } from './trace-options.ts';
import { tuningOptions } from './tuning-options.ts';

const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const commaList = z
  .string()
  .transform((text) =>
    text
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item.length > 0),
  )
  .refine((items) => items.length > 0);
const httpUrl = z.url({ protocol: /^https?$/ });
/** One Redis URL, or the nodes of a Redis Cluster; kept as given (trimmed), parsed by relay/coordination/redis/connection.ts. */
const redisUrls = commaList
  .pipe(z.array(z.url({ protocol: /^rediss?$/ })))
  .transform((urls) => urls.join(','));

const port = (fallback: string): OptionSpec =>
  integerOption({
    env: 'PORT',
    doc: 'listen port; `0` picks a free one',
    min: 0,
    max: 65_535,
    default: fallback,
    help: 'listen port; 0 picks a free one',
  });
const host: OptionSpec = {
  env: 'HOST',
  doc: 'listen address',
  schema: z.string().trim().min(1),
  default: '127.0.0.1',
  expected: 'a host name or IP address',
  placeholder: 'HOST',
  help: 'listen address',
};
const logLevel: OptionSpec = {
  env: 'LOG_LEVEL',
  doc: 'pino level (`fatal` ... `trace`, `silent`)',
  schema: z.enum(logLevels),
  default: 'info',
  expected: `one of ${logLevels.join(', ')}`,
  placeholder: 'LEVEL',
  help: 'log level of the JSON log on stdout',
};

/** Every option of `serve`, as the flag is spelt. */
const serveOptions = {
  port: port('8080'),
  host,
  upstream: {
    env: 'UPSTREAM_URL',
    doc: 'upstream base URL, or `sim` for the embedded simulator',
    schema: z.union([z.literal('sim'), httpUrl.transform((url) => url.replace(/\/+$/, ''))]),
    default: 'sim',
    expected: '`sim` or an http(s) URL such as https://upstream.example',
    quote: 'url',
    placeholder: 'URL',
    help: 'upstream base URL, or `sim` for the embedded simulator',
  },
  redis: {
    env: 'REDIS_URL',
    doc: 'Redis URL; set = cluster mode ([cluster.md](cluster.md)). A comma-separated list of node URLs, or one node in cluster mode, = a Redis Cluster',
    schema: redisUrls,
    default: undefined,
    expected: 'a redis:// or rediss:// URL, or a comma-separated list of them (the nodes of a Redis Cluster)',
    quote: 'url',
    placeholder: 'URL',
    help: 'Redis URL; set = cluster mode (several relays, one upstream poller per market). A comma-separated list of node URLs (or one node in cluster mode) = a Redis Cluster',
  },
  workers: {
    env: 'WORKERS',
    doc: 'relay processes sharing the listening port, `auto` = one per available core; above 1 they coordinate as a cluster over `--redis`, or over a `redis-server` started for them when unset ([Every core](#every-core-of-a-machine))',
    schema: z
      .string()
      .trim()
      .regex(/^(auto|\d+)$/)
      .transform((text) => (text === 'auto' ? availableParallelism() : Number(text)))
      .pipe(z.number().int().min(1).max(256)),
    default: '1',
    expected: '`auto` or an integer from 1 to 256',
    placeholder: 'N|auto',
    help: 'relay processes sharing the port (auto = one per core), coordinating over Redis',
  },
  'book-poll-ms': integerOption({
    env: 'BOOK_POLL_MS',
    doc: 'order-book poll interval per subscribed market; with `--scheduler freshness` the *minimum* interval of a book',
    min: 10,
    max: 3_600_000,
    default: '1000',
    placeholder: 'MS',
    help: 'order-book poll interval per subscribed market',
  }),
  'price-poll-ms': integerOption({
    env: 'PRICE_POLL_MS',
    doc: 'batch price poll interval',
    min: 10,
    max: 3_600_000,
    default: '1000',
    placeholder: 'MS',
    help: 'batch price poll interval',
  }),
  'upstream-concurrency': integerOption({
    env: 'UPSTREAM_CONCURRENCY',
    doc: 'upstream requests in flight at most',
    min: 1,
    max: 1024,
    default: '16',
    help: 'upstream requests in flight at most',
  }),
  'upstream-rps': integerOption({
    env: 'UPSTREAM_RPS',
    doc: 'upstream requests per second at most, the hard cap in every second (at most a fifth of it at once), for the whole cluster with `--redis` ([cluster.md](cluster.md)); polling spends 90% of it ([scheduler.md](scheduler.md))',
    min: 1,
    max: 100_000,
    default: '50',
    help: 'upstream requests per second at most',
  }),
  'fail-open-rps-fraction': {
    env: 'FAIL_OPEN_RPS_FRACTION',
    doc: 'cluster mode, Redis away: share of `--upstream-rps` a relay keeps to when it never learnt its own share ([cluster.md](cluster.md))',
    schema: z
      .string()
      .trim()
      .regex(/^\d*\.?\d+$/)
      .transform(Number)
      .pipe(z.number().gt(0).max(1)),
    default: '0.5',
    expected: 'a number above 0 and at most 1, such as 0.34',
    placeholder: 'F',
    help: 'cluster mode, Redis away: share of --upstream-rps a relay keeps to before it learnt its own',
  },
  ...pollOptions,
  ...groupOptions,
  'api-keys': {
    env: 'API_KEYS',
    doc: 'comma-separated keys; set = WebSocket and SSE clients must present one (the [REST front](#rest-front) takes none)',
    schema: commaList,
    default: undefined,
    expected: 'a comma-separated list of keys',
    quote: 'secret',
    placeholder: 'KEYS',
    help: 'comma-separated keys; set = WebSocket and SSE clients must present one',
  },
  'allowed-origins': {
    env: 'ALLOWED_ORIGINS',
    doc: 'comma-separated browser origins; set = others get 403',
    schema: commaList.pipe(z.array(httpUrl)),
    default: undefined,
    expected: 'comma-separated http(s) origins such as https://app.example',
    placeholder: 'ORIGINS',
    help: 'comma-separated browser origins; set = others refused',
  },
  ...historyOptions,
  'log-level': logLevel,
  compression: {
    env: 'COMPRESSION',
    doc: '`on` / `off`: permessage-deflate for WebSocket clients that offer it ([below](#compression))',
    schema: z.enum(['on', 'off']).transform((value) => value === 'on'),
    default: 'on',
    expected: 'on or off',
    placeholder: 'on|off',
    help: 'permessage-deflate for WebSocket clients that offer it',
  },
  [MARKETS_OPTION]: markets,
  seed,
  'sim-profile': { ...simProfile, doc: 'the same for `serve --upstream sim`' },
  // Operator endpoints (docs/operations.md "Operator endpoints").
  'operator-port': integerOption({
    env: 'OPERATOR_PORT',
    doc: 'serve the operator endpoints on this port only; the public port then has `/health`, `/livez`, `/readyz`, `/v1/ws`, `/v1/sse` and the [REST front](#rest-front) alone (any other path is 404)',
    min: 0,
    max: 65_535,
    default: undefined,
    help: 'serve metrics, status page and feed on this port only (not on --port)',
  }),
  'operator-host': {
    ...host,
    env: 'OPERATOR_HOST',
    doc: 'listen address of the operator port (loopback: reach it over SSH or a private network)',
    help: 'listen address of --operator-port',
  },
  'operator-key': {
    env: 'OPERATOR_KEY',
    doc: 'at least 16 characters; set = every operator endpoint answers 401 `unauthorized` without it (on either port)',
    schema: z.string().trim().min(16),
    default: undefined,
    expected: 'a key of at least 16 characters',
    quote: 'secret',
    placeholder: 'KEY',
    help: 'set = metrics, status page and feed need this key (Bearer, or ?operator_key= once)',
  },
  ...traceOptions,
  ...Object.fromEntries(Object.entries(tuningOptions).map(([name, { spec }]) => [name, spec])),
} satisfies Record<string, OptionSpec>;

/** Every option of `sim`. */
const simOptions = {
  port: port('9090'),
  host,
  [MARKETS_OPTION]: markets,
  seed,
  profile: simProfile,
  'sim-tick-ms': tuningOptions['sim-tick-ms']!.spec,
  'log-level': logLevel,
} satisfies Record<string, OptionSpec>;

export const commands: Record<'serve' | 'sim', Record<string, OptionSpec>> = {
  serve: serveOptions,
  sim: simOptions,
};
export type CommandName = keyof typeof commands;

export type LogLevel = (typeof logLevels)[number];
