/**
 * @module config/config
 * The command line and environment surface (docs/operations.md), validated once at start. Every
 * option has an environment twin; the flag wins. A bad value is a ConfigError of one line naming the
 * option, what was given and what is expected, which the CLI prints before exiting with code 2.
 */

import { z } from 'zod';
import type { IsolationLimits } from '../relay/admission/market.ts';
import type { SchedulerMode } from '../relay/poll/scheduler.ts';
import type { SimulatorProfileName } from '../sim/profile.ts';
import { ConfigError, splitArguments } from './command-line.ts';
import { groupOptions } from './group-options.ts';
import { integerOption, type OptionSpec, quotedValue } from './option-spec.ts';
import { pollOptions } from './poll-options.ts';
import { markets, seed, simProfile } from './sim-options.ts';
import {
  resolveTuning,
  setTuningValue,
  type TuningOverrides,
  tuningConflict,
  tuningOptions,
} from './tuning.ts';

export { ConfigError };

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

/** Set to `1` (the container image does) to make `serve` refuse to start without an explicit upstream. */
export const UPSTREAM_REQUIRED_ENV = 'UPSTREAM_REQUIRED';

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
  markets,
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
  ...Object.fromEntries(Object.entries(tuningOptions).map(([name, { spec }]) => [name, spec])),
} satisfies Record<string, OptionSpec>;

/** Every option of `sim`. */
const simOptions = {
  port: port('9090'),
  host,
  markets,
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

type LogLevel = (typeof logLevels)[number];

export interface ServeConfig {
  port: number;
  host: string;
  /** An http(s) base URL without trailing slash, or `sim`. */
  upstream: string;
  redis?: string;
  bookPollMs: number;
  pricePollMs: number;
  upstreamConcurrency: number;
  upstreamRps: number;
  /** Cluster mode: share of `upstreamRps` kept to while Redis is away, before a share was learnt. */
  failOpenRpsFraction?: number;
  /** How the poll budget is spent: `freshness` (default: hints, change rates) or `round-robin`. */
  scheduler?: SchedulerMode;
  /** Every stream is confirmed at least this often (ms) while the budget allows (DEFAULT_MAX_AGE_MS). */
  maxAgeMs?: number;
  /** Per-connection and per-key limits on what costs upstream requests (relay/admission/market.ts defaults). */
  isolation?: IsolationLimits;
  apiKeys?: string[];
  allowedOrigins?: string[];
  logLevel: LogLevel;
  /** permessage-deflate for WebSocket clients that offer it (default on). */
  compression?: boolean;
  /** Embedded simulator size and seed, used when `upstream` is `sim`. */
  simMarkets: number;
  simSeed: number;
  /** The embedded simulator's profile (default `default`). */
  simProfile?: SimulatorProfileName;
  /** Limits and timings; what is not given keeps its default (src/config/tuning.ts). */
  tuning?: TuningOverrides;
  /** Operator endpoints on their own port (and host), and/or behind a key. */
  operatorPort?: number | undefined;
  operatorHost?: string | undefined;
  operatorKey?: string | undefined;
}

export interface SimConfig {
  port: number;
  host: string;
  markets: number;
  seed: number;
  profile: SimulatorProfileName;
  tickMs: number;
  logLevel: LogLevel;
}

export type Command =
  | { command: 'serve'; config: ServeConfig }
  | { command: 'sim'; config: SimConfig }
  | { command: 'help'; topic: CommandName | undefined }
  | { command: 'version' };

function isCommand(name: string): name is CommandName {
  return Object.hasOwn(commands, name);
}

/** Parses argv (without node and script) and the environment into a validated command. */
export function parseCommandLine(argv: readonly string[], env: NodeJS.ProcessEnv): Command {
  const args = splitArguments(
    argv,
    (name) => Object.hasOwn(commands.serve, name) || Object.hasOwn(commands.sim, name),
  );
  if (args.version) return { command: 'version' };
  const [first, ...rest] = args.positionals;
  if (first === 'help') {
    const topic = rest[0];
    if (topic !== undefined && !isCommand(topic)) {
      throw new ConfigError('command', `unknown command "${topic}": expected serve or sim`);
    }
    return { command: 'help', topic };
  }
  const command = first ?? 'serve';
  if (!isCommand(command)) {
    throw new ConfigError('command', `unknown command "${command}": expected serve, sim or help`);
  }
  if (args.help) return { command: 'help', topic: command };
  if (rest.length > 0) throw new ConfigError('arguments', `unexpected argument "${rest[0]}"`);
  const options = commands[command];
  for (const name of args.values.keys()) {
    if (!Object.hasOwn(options, name)) {
      throw new ConfigError(name, `unknown option --${name} for ${command} (market-relay help ${command})`);
    }
  }

  const read = (name: string): unknown => {
    const spec = options[name]!;
    const flag = args.values.get(name);
    // An empty variable counts as unset, as `API_KEYS=` in a compose file means.
    const fromEnv = env[spec.env] === '' ? undefined : env[spec.env];
    const raw = flag ?? fromEnv ?? spec.default;
    if (raw === undefined) return undefined;
    const result = spec.schema.safeParse(raw);
    if (!result.success) {
      const source = flag === undefined && fromEnv !== undefined ? ` (from env ${spec.env})` : '';
      throw new ConfigError(
        name,
        `invalid --${name}${source}: got ${quotedValue(spec, String(raw))}, expected ${spec.expected}`,
      );
    }
    return result.data;
  };
  const number = (name: string) => read(name) as number;

  if (command === 'sim') {
    return {
      command: 'sim',
      config: {
        port: number('port'),
        host: read('host') as string,
        markets: number('markets'),
        seed: number('seed'),
        profile: read('profile') as SimulatorProfileName,
        tickMs: number('sim-tick-ms'),
        logLevel: read('log-level') as LogLevel,
      },
    };
  }

  // The container image has no default upstream: an image that quietly served simulated markets
  // would look like a working relay (docs/operations.md "Going to production").
  if (env[UPSTREAM_REQUIRED_ENV] === '1' && args.values.get('upstream') === undefined && !env.UPSTREAM_URL) {
    throw new ConfigError(
      'upstream',
      'missing --upstream: this build has no default upstream; give --upstream URL (or UPSTREAM_URL), or --upstream sim for the simulator',
    );
  }

  const tuning: TuningOverrides = {};
  for (const [name, { key }] of Object.entries(tuningOptions)) setTuningValue(tuning, key, number(name));
  const conflict = tuningConflict(resolveTuning(tuning));
  if (conflict !== undefined) {
    const [name, expected] = conflict;
    const value = args.values.get(name) ?? env[options[name]!.env] ?? options[name]!.default;
    throw new ConfigError(
      name,
      `invalid --${name}: got ${quotedValue(options[name]!, String(value))}, expected ${expected}`,
    );
  }
  return {
    command: 'serve',
    config: {
      port: number('port'),
      host: read('host') as string,
      upstream: read('upstream') as string,
      redis: read('redis') as string | undefined,
      bookPollMs: number('book-poll-ms'),
      pricePollMs: number('price-poll-ms'),
      upstreamConcurrency: number('upstream-concurrency'),
      upstreamRps: number('upstream-rps'),
      failOpenRpsFraction: number('fail-open-rps-fraction'),
      scheduler: read('scheduler') as SchedulerMode,
      maxAgeMs: maxAgeAtLeastBookPoll(number('max-age-ms'), number('book-poll-ms')),
      isolation: {
        maxPrivateTargetsPerConnection: number('max-private-markets'),
        maxPrivateTargetsPerKey: number('max-private-markets-per-key'),
        newMarketsPerSecond: number('new-markets-per-second'),
        newMarketsPerSecondPerKey: number('new-markets-per-second-per-key'),
        lookupsPerSecond: number('unknown-lookups-per-second'),
        maxRestPaths: number('max-rest-paths'),
        maxRestPathsPerAddress: number('max-rest-paths-per-address'),
        maxCatalogueFilters: number('max-catalogue-filters'),
        maxCatalogueFiltersPerAddress: number('max-catalogue-filters-per-address'),
        maxCandleStreams: number('max-candle-streams'),
        maxCandleStreamsPerAddress: number('max-candle-streams-per-address'),
        newStreamsPerSecondPerAddress: number('new-streams-per-second-per-address'),
        unconfirmedPathsPerSecondPerAddress: number('unconfirmed-paths-per-second-per-address'),
      },
      apiKeys: read('api-keys') as string[] | undefined,
      allowedOrigins: read('allowed-origins') as string[] | undefined,
      logLevel: read('log-level') as LogLevel,
      compression: read('compression') as boolean,
      simMarkets: number('markets'),
      simSeed: number('seed'),
      simProfile: read('sim-profile') as SimulatorProfileName,
      tuning,
      operatorPort: read('operator-port') as number | undefined,
      operatorHost: read('operator-host') as string,
      operatorKey: read('operator-key') as string | undefined,
    },
  };
}

function maxAgeAtLeastBookPoll(maxAgeMs: number, bookPollMs: number): number {
  if (maxAgeMs < bookPollMs)
    throw new ConfigError(
      'max-age-ms',
      `invalid --max-age-ms: got "${maxAgeMs}", expected at least --book-poll-ms (${bookPollMs})`,
    );
  return maxAgeMs;
}
