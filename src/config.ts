/**
 * @module config
 * The command line and environment surface (docs/operations.md), validated once at start.
 * Every option has an environment twin; the flag wins. A bad value is a ConfigError naming the
 * option, which the CLI prints as one line before exiting with code 2.
 */
import { parseArgs } from 'node:util';
import { z } from 'zod';
import type { IsolationLimits } from './relay/admission.ts';

/** A configuration value that cannot be used; the CLI prints it as one line and exits 2. */
export class ConfigError extends Error {
  override name = 'ConfigError';
  readonly option: string;

  constructor(option: string, message: string) {
    super(`invalid --${option}: ${message}`);
    this.option = option;
  }
}

const port = z.coerce.number().int().min(0).max(65_535);
const positiveInt = z.coerce.number().int().positive();
const host = z.string().min(1);
const logLevel = z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);
const commaList = z
  .string()
  .transform((text) =>
    text
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item.length > 0),
  )
  .refine((items) => items.length > 0, 'must name at least one value');
const upstream = z.union([
  z.literal('sim'),
  z
    .url({ protocol: /^https?$/, error: 'must be `sim` or an http(s) URL' })
    .transform((url) => url.replace(/\/+$/, '')),
]);
const redisUrl = z.url({ protocol: /^rediss?$/, error: 'must be a redis:// or rediss:// URL' });
const origin = z.url({ protocol: /^https?$/, error: 'each origin must be an http(s) origin' });

/** Every stream is confirmed at least this often unless configured otherwise. */
export const DEFAULT_MAX_AGE_MS = 30_000;

/** Option name (as the flag is spelt) -> environment variable, schema, default. */
const serveOptions = {
  port: { env: 'PORT', schema: port, default: '8080' },
  host: { env: 'HOST', schema: host, default: '127.0.0.1' },
  upstream: { env: 'UPSTREAM_URL', schema: upstream, default: 'sim' },
  redis: { env: 'REDIS_URL', schema: redisUrl, default: undefined },
  'book-poll-ms': { env: 'BOOK_POLL_MS', schema: positiveInt.min(10), default: '1000' },
  'price-poll-ms': { env: 'PRICE_POLL_MS', schema: positiveInt.min(10), default: '1000' },
  'upstream-concurrency': { env: 'UPSTREAM_CONCURRENCY', schema: positiveInt.max(1024), default: '16' },
  'upstream-rps': { env: 'UPSTREAM_RPS', schema: positiveInt.max(100_000), default: '50' },
  'api-keys': { env: 'API_KEYS', schema: commaList, default: undefined },
  // Poll-side scheduling and isolation (docs/scheduler.md, docs/operations.md).
  scheduler: { env: 'SCHEDULER', schema: z.enum(['freshness', 'round-robin']), default: 'freshness' },
  'max-age-ms': {
    env: 'MAX_AGE_MS',
    schema: positiveInt.min(100).max(3_600_000),
    default: String(DEFAULT_MAX_AGE_MS),
  },
  'max-private-markets': { env: 'MAX_PRIVATE_MARKETS', schema: positiveInt.max(100_000), default: '200' },
  'max-private-markets-per-key': {
    env: 'MAX_PRIVATE_MARKETS_PER_KEY',
    schema: positiveInt.max(1_000_000),
    default: '1000',
  },
  'new-markets-per-second': { env: 'NEW_MARKETS_PER_SECOND', schema: positiveInt.max(10_000), default: '20' },
  'new-markets-per-second-per-key': {
    env: 'NEW_MARKETS_PER_SECOND_PER_KEY',
    schema: positiveInt.max(100_000),
    default: '50',
  },
  'unknown-lookups-per-second': {
    env: 'UNKNOWN_LOOKUPS_PER_SECOND',
    schema: positiveInt.max(1_000),
    default: '2',
  },
  'allowed-origins': { env: 'ALLOWED_ORIGINS', schema: commaList.pipe(z.array(origin)), default: undefined },
  'log-level': { env: 'LOG_LEVEL', schema: logLevel, default: 'info' },
  markets: { env: 'SIM_MARKETS', schema: positiveInt.max(10_000), default: '50' },
  seed: { env: 'SIM_SEED', schema: z.coerce.number().int(), default: '1' },
} as const;

type OptionName = keyof typeof serveOptions;
type Parsed<N extends OptionName> = z.output<(typeof serveOptions)[N]['schema']>;

export interface ServeConfig {
  port: number;
  host: string;
  upstream: Parsed<'upstream'>;
  redis?: string;
  bookPollMs: number;
  pricePollMs: number;
  upstreamConcurrency: number;
  upstreamRps: number;
  /** How the poll budget is spent: `freshness` (default: hints, change rates) or `round-robin`. */
  scheduler?: Parsed<'scheduler'>;
  /** Every stream is confirmed at least this often (ms) while the budget allows (DEFAULT_MAX_AGE_MS). */
  maxAgeMs?: number;
  /** Per-connection and per-key limits on what costs upstream requests (relay/admission.ts defaults). */
  isolation?: IsolationLimits;
  apiKeys?: string[];
  allowedOrigins?: string[];
  logLevel: Parsed<'log-level'>;
  /** Embedded simulator size and seed, used when `upstream` is `sim`. */
  simMarkets: number;
  simSeed: number;
}

export interface SimConfig {
  port: number;
  host: string;
  markets: number;
  seed: number;
  logLevel: Parsed<'log-level'>;
}

export type Command = { command: 'serve'; config: ServeConfig } | { command: 'sim'; config: SimConfig };

const commands = ['serve', 'sim'] as const;

/** Parses argv (without node and script) and the environment into a validated command. */
export function parseCommandLine(argv: readonly string[], env: NodeJS.ProcessEnv): Command {
  const flagSpec = Object.fromEntries(
    Object.keys(serveOptions).map((name) => [name, { type: 'string' as const }]),
  ) as Record<OptionName, { type: 'string' }>;
  let parsed: ReturnType<typeof parseArgs<{ options: typeof flagSpec; allowPositionals: true }>>;
  try {
    parsed = parseArgs({ args: [...argv], options: flagSpec, allowPositionals: true, strict: true });
  } catch (error) {
    throw new ConfigError('arguments', error instanceof Error ? error.message : String(error));
  }
  const [command = 'serve', ...extra] = parsed.positionals;
  if (!(commands as readonly string[]).includes(command)) {
    throw new ConfigError('command', `unknown command "${command}" (expected ${commands.join(' or ')})`);
  }
  if (extra.length > 0) throw new ConfigError('arguments', `unexpected argument "${extra[0]}"`);

  const read = <N extends OptionName>(name: N): Parsed<N> | undefined => {
    const spec = serveOptions[name];
    const raw = parsed.values[name] ?? env[spec.env] ?? spec.default;
    if (raw === undefined) return undefined;
    const result = spec.schema.safeParse(raw);
    if (!result.success) {
      const issue = result.error.issues[0];
      throw new ConfigError(
        name,
        `${JSON.stringify(raw)}: ${issue?.message ?? 'invalid value'} (env ${spec.env})`,
      );
    }
    return result.data as Parsed<N>;
  };
  const required = <N extends OptionName>(name: N): Parsed<N> => read(name) as Parsed<N>;

  if (command === 'sim') {
    // The simulator's own default port is 9090 (interface.md).
    const simPort = parsed.values.port ?? env.PORT ?? '9090';
    const portResult = port.safeParse(simPort);
    if (!portResult.success)
      throw new ConfigError('port', `${JSON.stringify(simPort)}: not a port number (env PORT)`);
    return {
      command: 'sim',
      config: {
        port: portResult.data,
        host: required('host'),
        markets: required('markets'),
        seed: required('seed'),
        logLevel: required('log-level'),
      },
    };
  }
  return {
    command: 'serve',
    config: {
      port: required('port'),
      host: required('host'),
      upstream: required('upstream'),
      redis: read('redis'),
      bookPollMs: required('book-poll-ms'),
      pricePollMs: required('price-poll-ms'),
      upstreamConcurrency: required('upstream-concurrency'),
      upstreamRps: required('upstream-rps'),
      scheduler: required('scheduler'),
      maxAgeMs: maxAgeAtLeastBookPoll(required('max-age-ms'), required('book-poll-ms')),
      isolation: {
        maxPrivateTargetsPerConnection: required('max-private-markets'),
        maxPrivateTargetsPerKey: required('max-private-markets-per-key'),
        newMarketsPerSecond: required('new-markets-per-second'),
        newMarketsPerSecondPerKey: required('new-markets-per-second-per-key'),
        lookupsPerSecond: required('unknown-lookups-per-second'),
      },
      apiKeys: read('api-keys'),
      allowedOrigins: read('allowed-origins'),
      logLevel: required('log-level'),
      simMarkets: required('markets'),
      simSeed: required('seed'),
    },
  };
}

function maxAgeAtLeastBookPoll(maxAgeMs: number, bookPollMs: number): number {
  if (maxAgeMs < bookPollMs)
    throw new ConfigError('max-age-ms', `${maxAgeMs} is below --book-poll-ms ${bookPollMs} (env MAX_AGE_MS)`);
  return maxAgeMs;
}
