/**
 * @module tuning
 * The relay's limits and timings, their defaults, and the option (with its environment twin) that
 * sets each one from the command line; docs/operations.md lists them. Tests and benchmarks pass
 * overrides to startRelay directly.
 */
import { integerOption, type OptionSpec } from './option-spec.ts';
import type { ConnectionLimits } from './ws/client-connection.ts';

export interface RelayTuning {
  heartbeatMs: number;
  /** How long a stream nobody subscribes to is still polled, so a reconnect finds it (and can resume). */
  lingerMs: number;
  /** Updates each stream keeps for resume. */
  resumeBufferSize: number;
  /** A stream is stale after this many poll intervals without a successful poll. */
  staleAfterFactor: number;
  maxConnections: number;
  maxFrameBytes: number;
  upstreamTimeoutMs: number;
  upstreamRetries: number;
  /** A market the status page shows as unreachable upstream after this long without any success. */
  upstreamDownAfterMs: number;
  connection: ConnectionLimits;
  /** Simulator tick for the embedded simulator (ms; 0 = manual). */
  simTickMs: number;
  /** REST front: how long an upstream answer is served again, and how many answers are kept. */
  restCacheTtlMs: number;
  restCacheCapacity: number;
}

export const defaultTuning: RelayTuning = {
  heartbeatMs: 15_000,
  lingerMs: 5_000,
  resumeBufferSize: 1_000,
  staleAfterFactor: 3,
  maxConnections: 10_000,
  maxFrameBytes: 64 * 1024,
  upstreamTimeoutMs: 5_000,
  upstreamRetries: 2,
  upstreamDownAfterMs: 10_000,
  connection: {
    maxStreams: 1_000,
    requestsPerSecond: 20,
    requestBurst: 40,
    highWaterBytes: 1024 * 1024,
    maxBufferBytes: 8 * 1024 * 1024,
    slowConsumerTimeoutMs: 10_000,
  },
  simTickMs: 250,
  restCacheTtlMs: 1_000,
  restCacheCapacity: 1_000,
};

export type TuningOverrides = Partial<Omit<RelayTuning, 'connection'>> & {
  connection?: Partial<ConnectionLimits>;
};

export function resolveTuning(overrides: TuningOverrides = {}): RelayTuning {
  return {
    ...defaultTuning,
    ...overrides,
    connection: { ...defaultTuning.connection, ...overrides.connection },
  };
}

type TopKey = Exclude<keyof RelayTuning, 'connection'>;
type TuningKey = TopKey | `connection.${keyof ConnectionLimits}`;

export interface TuningOption {
  key: TuningKey;
  spec: OptionSpec;
}

const DAY_MS = 86_400_000;
const GIB = 1024 ** 3;

function option(
  key: TuningKey,
  env: string,
  help: string,
  range: { min: number; max?: number; placeholder?: string },
): TuningOption {
  return {
    key,
    spec: integerOption({ env, help, default: String(tuningValue(defaultTuning, key)), ...range }),
  };
}

/** Flag name -> the tuning value it sets; each flag's environment twin is the upper-case name. */
export const tuningOptions: Record<string, TuningOption> = {
  'heartbeat-ms': option(
    'heartbeatMs',
    'HEARTBEAT_MS',
    'ping and heartbeat interval; a client missing two pings is dropped',
    {
      min: 100,
      max: DAY_MS,
      placeholder: 'MS',
    },
  ),
  'linger-ms': option(
    'lingerMs',
    'LINGER_MS',
    'a stream is still polled this long after its last subscriber left',
    {
      min: 0,
      max: DAY_MS,
      placeholder: 'MS',
    },
  ),
  'resume-buffer': option('resumeBufferSize', 'RESUME_BUFFER', 'updates kept per stream for resume', {
    min: 0,
    max: 1_000_000,
  }),
  'stale-after-polls': option(
    'staleAfterFactor',
    'STALE_AFTER_POLLS',
    'a stream turns stale after this many poll intervals without a successful poll',
    { min: 1, max: 1_000 },
  ),
  'max-connections': option(
    'maxConnections',
    'MAX_CONNECTIONS',
    'WebSocket and SSE connections together at most; more are refused (4029 / 503)',
    {
      min: 1,
      max: 10_000_000,
    },
  ),
  'max-frame-bytes': option(
    'maxFrameBytes',
    'MAX_FRAME_BYTES',
    'largest client frame; bigger closes with 1009',
    {
      min: 256,
      max: 64 * 1024 * 1024,
      placeholder: 'BYTES',
    },
  ),
  'upstream-timeout-ms': option('upstreamTimeoutMs', 'UPSTREAM_TIMEOUT_MS', 'upstream request timeout', {
    min: 10,
    max: 600_000,
    placeholder: 'MS',
  }),
  'upstream-retries': option('upstreamRetries', 'UPSTREAM_RETRIES', 'retries of a failed upstream request', {
    min: 0,
    max: 10,
  }),
  'upstream-down-after-ms': option(
    'upstreamDownAfterMs',
    'UPSTREAM_DOWN_AFTER_MS',
    '/health answers 503 after this long without any upstream success',
    { min: 100, max: DAY_MS, placeholder: 'MS' },
  ),
  'max-streams-per-connection': option(
    'connection.maxStreams',
    'MAX_STREAMS_PER_CONNECTION',
    'streams one connection may hold',
    { min: 1, max: 1_000_000 },
  ),
  'client-rps': option(
    'connection.requestsPerSecond',
    'CLIENT_RPS',
    'client requests per second per connection',
    {
      min: 1,
      max: 100_000,
    },
  ),
  'client-burst': option('connection.requestBurst', 'CLIENT_BURST', 'burst allowance above --client-rps', {
    min: 1,
    max: 1_000_000,
  }),
  'send-high-water-bytes': option(
    'connection.highWaterBytes',
    'SEND_HIGH_WATER_BYTES',
    'send buffer above which updates are held back (conflated)',
    { min: 1024, max: GIB, placeholder: 'BYTES' },
  ),
  'send-max-buffer-bytes': option(
    'connection.maxBufferBytes',
    'SEND_MAX_BUFFER_BYTES',
    'send buffer that closes the connection with 4008 at once',
    { min: 1024, max: 4 * GIB, placeholder: 'BYTES' },
  ),
  'slow-consumer-timeout-ms': option(
    'connection.slowConsumerTimeoutMs',
    'SLOW_CONSUMER_TIMEOUT_MS',
    'closed with 4008 after this long above the high-water mark',
    { min: 100, max: DAY_MS, placeholder: 'MS' },
  ),
  'rest-cache-ms': option(
    'restCacheTtlMs',
    'REST_CACHE_MS',
    'REST front: an upstream answer is served again for this long (0: coalescing only)',
    { min: 0, max: DAY_MS, placeholder: 'MS' },
  ),
  'rest-cache-entries': option(
    'restCacheCapacity',
    'REST_CACHE_ENTRIES',
    'REST front: upstream answers kept at most',
    { min: 1, max: 1_000_000 },
  ),
  'sim-tick-ms': option('simTickMs', 'SIM_TICK_MS', 'simulated markets change this often (0: never)', {
    min: 0,
    max: DAY_MS,
    placeholder: 'MS',
  }),
};

export function tuningValue(tuning: RelayTuning, key: TuningKey): number {
  if (key.startsWith('connection.')) {
    return tuning.connection[key.slice('connection.'.length) as keyof ConnectionLimits];
  }
  return tuning[key as TopKey];
}

/** Sets one value of a set of overrides, by key. */
export function setTuningValue(overrides: TuningOverrides, key: TuningKey, value: number): void {
  if (key.startsWith('connection.')) {
    overrides.connection = { ...overrides.connection, [key.slice('connection.'.length)]: value };
  } else {
    overrides[key as TopKey] = value;
  }
}

/** A combination of values that each pass alone but not together, as [option, what it must be]. */
export function tuningConflict(tuning: RelayTuning): [string, string] | undefined {
  const { highWaterBytes, maxBufferBytes } = tuning.connection;
  if (highWaterBytes >= maxBufferBytes) {
    return ['send-high-water-bytes', `less than --send-max-buffer-bytes (${maxBufferBytes})`];
  }
  return undefined;
}
