/**
 * @module config/config
 * The command line and environment surface (docs/operations.md), validated once at start: argv and
 * the environment read into a typed command, by the options config/command-options.ts declares.
 * Every option has an environment twin; the flag wins. A bad value is a ConfigError of one line naming the
 * option, what was given and what is expected, which the CLI prints before exiting with code 2.
 */

import type { IsolationLimits } from '../relay/admission/market.ts';
import type { RedisFormat } from '../relay/coordination/redis/formats.ts';
import type { SchedulerMode } from '../relay/poll/scheduler.ts';
import type { RecordSelection } from '../relay/session/recording-holds.ts';
import type { SimulatorProfileName } from '../sim/profile.ts';
import { ConfigError, splitArguments } from './command-line.ts';
import { type CommandName, commands, type LogLevel } from './command-options.ts';
import { channelBoundLimits } from './group-options.ts';
import { type HistoryConfig, historyConfig } from './history-options.ts';
import { quotedValue } from './option-spec.ts';
import { MARKETS_OPTION } from './sim-options.ts';
import { resolveTuning, setTuningValue, type TuningOverrides, tuningConflict } from './tuning.ts';
import { tuningOptions } from './tuning-options.ts';

export { ConfigError };

/** Set to `1` (the container image does) to make `serve` refuse to start without an explicit upstream. */
export const UPSTREAM_REQUIRED_ENV = 'UPSTREAM_REQUIRED';

export interface ServeConfig {
  port: number;
  host: string;
  /** An http(s) base URL without trailing slash, or `sim`. */
  upstream: string;
  redis?: string;
  /** Relay processes sharing the listening port (src/workers/); 1 = this process alone. */
  workers?: number;
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
  /**
   * Cluster mode: the formats of what this relay writes to Redis, oldest first; the shipped ones
   * (relay/coordination/redis/formats.ts) unless a test gives the next release's. No option sets it.
   */
  redisFormats?: readonly RedisFormat[];
  /** What the relay records into (docs/history.md); unset = nothing is recorded (`--history off`). */
  history?: HistoryConfig | undefined;
  /** Streams held with no subscriber so that they are recorded (`--record`). */
  record?: RecordSelection[] | undefined;
  /** Operator endpoints on their own port (and host), and/or behind a key. */
  operatorPort?: number | undefined;
  operatorHost?: string | undefined;
  operatorKey?: string | undefined;
  /** OTLP/HTTP receiver of the book polls' traces; unset = no tracing (docs/operations.md "Traces"). */
  otelEndpoint?: string | undefined;
  /** The share of book polls traced (0..1). */
  otelSampleRatio?: number;
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
    (name) => name === 'record',
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
        markets: number(MARKETS_OPTION),
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
      workers: number('workers'),
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
        ...channelBoundLimits(number),
        newStreamsPerSecondPerAddress: number('new-streams-per-second-per-address'),
        unconfirmedPathsPerSecondPerAddress: number('unconfirmed-paths-per-second-per-address'),
      },
      apiKeys: read('api-keys') as string[] | undefined,
      allowedOrigins: read('allowed-origins') as string[] | undefined,
      logLevel: read('log-level') as LogLevel,
      compression: read('compression') as boolean,
      simMarkets: number(MARKETS_OPTION),
      simSeed: number('seed'),
      simProfile: read('sim-profile') as SimulatorProfileName,
      tuning,
      history: historyConfig(read),
      record: read('record') as RecordSelection[] | undefined,
      operatorPort: read('operator-port') as number | undefined,
      operatorHost: read('operator-host') as string,
      operatorKey: read('operator-key') as string | undefined,
      otelEndpoint: read('otel-endpoint') as string | undefined,
      otelSampleRatio: number('otel-sample-ratio'),
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
