import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { type Command, ConfigError, parseCommandLine, type ServeConfig } from '../../src/config/config.ts';
import { defaultTuning, resolveTuning } from '../../src/config/tuning.ts';
import { tuningOptions } from '../../src/config/tuning-options.ts';
import { allSimulatorProfileNames } from '../../src/sim/profile.ts';

function serveConfig(argv: string[], env: NodeJS.ProcessEnv = {}): ServeConfig {
  const command = parseCommandLine(argv, env);
  if (command.command !== 'serve') throw new Error(`expected serve, got ${command.command}`);
  return command.config;
}

function configError(argv: string[], env: NodeJS.ProcessEnv = {}): ConfigError {
  try {
    parseCommandLine(argv, env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error(`${JSON.stringify(argv)} was accepted`);
}

describe('parseCommandLine', () => {
  it('gives the documented defaults', () => {
    const { tuning, ...config } = serveConfig([]);
    expect(config).toEqual({
      port: 8080,
      host: '127.0.0.1',
      upstream: 'sim',
      redis: undefined,
      workers: 1,
      bookPollMs: 1000,
      pricePollMs: 1000,
      upstreamConcurrency: 16,
      upstreamRps: 50,
      failOpenRpsFraction: 0.5,
      scheduler: 'freshness',
      maxAgeMs: 30_000,
      isolation: {
        maxPrivateTargetsPerConnection: 200,
        maxPrivateTargetsPerKey: 1000,
        newMarketsPerSecond: 20,
        newMarketsPerSecondPerKey: 50,
        lookupsPerSecond: 2,
        maxRestPaths: 100,
        maxRestPathsPerAddress: 200,
        maxCatalogueFilters: 10,
        maxCatalogueFiltersPerAddress: 20,
        maxCandleStreams: 50,
        maxCandleStreamsPerAddress: 100,
        newStreamsPerSecondPerAddress: 50,
        unconfirmedPathsPerSecondPerAddress: 5,
      },
      apiKeys: undefined,
      allowedOrigins: undefined,
      logLevel: 'info',
      compression: true,
      simMarkets: 50,
      simSeed: 1,
      simProfile: 'default',
      operatorHost: '127.0.0.1',
      otelEndpoint: undefined,
      otelSampleRatio: 0.01,
      // `serve` records by default (docs/history.md).
      history: {
        store: 'embedded',
        dataDir: './market-relay-data',
        retentionMs: 86_400_000,
        maxBytes: 1024 ** 3,
        flushMs: 4_000,
      },
    });
    expect(resolveTuning(tuning)).toEqual(defaultTuning);
    expect(parseCommandLine(['sim'], {})).toEqual({
      command: 'sim',
      config: {
        port: 9090,
        host: '127.0.0.1',
        markets: 50,
        seed: 1,
        profile: 'default',
        tickMs: 250,
        logLevel: 'info',
      },
    });
  });

  it('picks the simulator profile by flag or SIM_PROFILE, for sim and the embedded simulator', () => {
    expect(parseCommandLine(['sim', '--profile', 'terse'], {})).toMatchObject({
      config: { profile: 'terse' },
    });
    expect(parseCommandLine(['sim'], { SIM_PROFILE: 'terse' })).toMatchObject({
      config: { profile: 'terse' },
    });
    expect(serveConfig(['--sim-profile', 'terse'])).toMatchObject({ simProfile: 'terse' });
    expect(serveConfig([], { SIM_PROFILE: 'terse' })).toMatchObject({ simProfile: 'terse' });
    expect(configError(['sim', '--profile', 'chatty']).message).toBe(
      `invalid --profile: got "chatty", expected one of ${allSimulatorProfileNames.join(', ')}`,
    );
  });

  it('reads the operator endpoint options, validated', () => {
    const config = serveConfig(['--operator-port', '9100'], { OPERATOR_KEY: 'k'.repeat(16) });
    expect(config).toMatchObject({
      operatorPort: 9100,
      operatorHost: '127.0.0.1',
      operatorKey: 'k'.repeat(16),
    });
    expect(configError(['--operator-key', 'short']).message).toMatch(/operator-key.*at least 16 characters/);
    expect(configError(['--operator-port', '70000']).message).toMatch(/operator-port/);
  });

  it('reads the status feed and edge limits into the tuning, validated', () => {
    const { tuning } = serveConfig(
      ['--max-connections-per-address', '7', '--trusted-proxy-depth', '1', '--close-grace-ms', '500'],
      { CONNECTION_RATE_PER_ADDRESS: '3', FLOOD_CLOSE_AFTER_MS: '2000', MAX_STATUS_VIEWERS: '5' },
    );
    expect(resolveTuning(tuning)).toMatchObject({
      edge: { maxConnectionsPerAddress: 7, trustedProxyDepth: 1, connectionsPerSecondPerAddress: 3 },
      connection: { closeGraceMs: 500, floodCloseAfterMs: 2_000 },
      statusFeed: { maxViewers: 5, viewerBufferBytes: defaultTuning.statusFeed.viewerBufferBytes },
    });
    expect(configError(['--trusted-proxy-depth', '-1']).message).toMatch(/trusted-proxy-depth/);
    expect(configError([], { HEADERS_TIMEOUT_MS: '10' }).message).toMatch(
      /headers-timeout-ms.*HEADERS_TIMEOUT_MS/,
    );
    expect(configError(['--max-pending-connections', 'many']).message).toMatch(/max-pending-connections/);
    expect(configError(['--status-viewer-buffer-bytes', '10']).message).toMatch(/status-viewer-buffer-bytes/);
  });

  it('lets the flag win over its environment twin', () => {
    const config = serveConfig(['serve', '--port', '0', '--api-keys', 'a, b'], {
      PORT: '9999',
      API_KEYS: 'z',
      UPSTREAM_URL: 'http://upstream.example:8000/',
    });
    expect(config).toMatchObject({ port: 0, apiKeys: ['a', 'b'], upstream: 'http://upstream.example:8000' });
    expect(serveConfig(['--port=7000'], { PORT: '9999' }).port).toBe(7000);
  });

  it('sets every limit and timing of the tuning by flag and by environment', () => {
    const names = Object.keys(tuningOptions);
    expect(names.length).toBeGreaterThanOrEqual(16);
    const flags = serveConfig([
      '--heartbeat-ms',
      '2000',
      '--max-streams-per-connection',
      '7',
      '--send-high-water-bytes',
      '4096',
    ]);
    expect(resolveTuning(flags.tuning)).toMatchObject({
      heartbeatMs: 2000,
      connection: { maxStreams: 7, highWaterBytes: 4096, maxBufferBytes: 8 * 1024 * 1024 },
    });
    expect(serveConfig(['--workers', '3']).workers).toBe(3);
    expect(serveConfig([], { WORKERS: 'auto' }).workers).toBe(availableParallelism());
    expect(serveConfig(['--redis', ' redis://a:7000 , redis://b:7001,']).redis).toBe(
      'redis://a:7000,redis://b:7001',
    );
    const env = serveConfig([], {
      LINGER_MS: '0',
      UPSTREAM_RETRIES: '0',
      SIM_TICK_MS: '0',
      COALESCE_MS: '0',
    });
    expect(resolveTuning(env.tuning)).toMatchObject({
      lingerMs: 0,
      upstreamRetries: 0,
      simTickMs: 0,
      coalesceMs: 0,
    });
    // Each option's default is the tuning's default.
    const defaults = resolveTuning(serveConfig([]).tuning);
    expect(defaults).toEqual(defaultTuning);
  });

  it.each([
    [['--port', '70000'], 'port', 'invalid --port: got "70000", expected an integer from 0 to 65,535'],
    [['--port', '-1'], 'port', 'invalid --port: got "-1", expected an integer from 0 to 65,535'],
    [['--port', 'abc'], 'port', 'invalid --port: got "abc", expected an integer from 0 to 65,535'],
    [['--book-poll-ms', '0'], 'book-poll-ms', 'got "0", expected an integer from 10 to'],
    [['--upstream', 'notaurl'], 'upstream', 'got "notaurl", expected `sim` or an http(s) URL'],
    [['--upstream', 'ftp://x'], 'upstream', 'got "ftp://x", expected `sim` or an http(s) URL'],
    [['--redis', 'http://x'], 'redis', 'got "http://x", expected a redis:// or rediss:// URL'],
    [
      ['--redis', 'redis://a:7000,http://b'],
      'redis',
      'expected a redis:// or rediss:// URL, or a comma-separated',
    ],
    [['--redis', ' , '], 'redis', 'expected a redis:// or rediss:// URL'],
    [['--allowed-origins', 'not a url'], 'allowed-origins', 'expected comma-separated http(s) origins'],
    [['--log-level', 'loud'], 'log-level', 'got "loud", expected one of fatal, error, warn'],
    [['--fail-open-rps-fraction', '0'], 'fail-open-rps-fraction', 'got "0", expected a number above 0'],
    [['--fail-open-rps-fraction', '1.5'], 'fail-open-rps-fraction', 'got "1.5", expected a number above 0'],
    [['--fail-open-rps-fraction', 'half'], 'fail-open-rps-fraction', 'got "half", expected a number above 0'],
    [['--otel-endpoint', 'collector:4318'], 'otel-endpoint', 'expected an http(s) URL such as'],
    [['--otel-sample-ratio', '1.5'], 'otel-sample-ratio', 'got "1.5", expected a number from 0 to 1'],
    [['--otel-sample-ratio', '-0.1'], 'otel-sample-ratio', 'got "-0.1", expected a number from 0 to 1'],
    [['--workers', '0'], 'workers', 'got "0", expected `auto` or an integer from 1 to 256'],
    [['--workers', 'all'], 'workers', 'got "all", expected `auto` or an integer from 1 to 256'],
    [['--compression', 'maybe'], 'compression', 'got "maybe", expected on or off'],
    [['--heartbeat-ms', '1.5'], 'heartbeat-ms', 'got "1.5", expected an integer from 100 to'],
    [['--coalesce-ms', '101'], 'coalesce-ms', 'got "101", expected an integer from 0 to 100'],
    [['--coalesce-ms=-1'], 'coalesce-ms', 'got "-1", expected an integer from 0 to 100'],
    [
      ['--send-high-water-bytes', '9000000'],
      'send-high-water-bytes',
      'expected less than --send-max-buffer-bytes',
    ],
    [['--scheduler', 'fifo'], 'scheduler', 'got "fifo", expected freshness or round-robin'],
    [['--max-age-ms', '500'], 'max-age-ms', 'got "500", expected at least --book-poll-ms (1000)'],
    [['--max-private-markets', '0'], 'max-private-markets', 'got "0", expected an integer from 1 to'],
    [['--new-markets-per-second', '1.5'], 'new-markets-per-second', 'got "1.5", expected an integer'],
    [['--unknown-lookups-per-second', 'x'], 'unknown-lookups-per-second', 'got "x", expected an integer'],
    [['--nope', '1'], 'nope', 'unknown option --nope (market-relay --help lists the options)'],
    [['sim', '--redis', 'redis://x'], 'redis', 'unknown option --redis for sim'],
    [['-x'], '-x', 'unknown option -x'],
    [['--port'], 'port', '--port needs a value'],
    [['dance'], 'command', 'unknown command "dance": expected serve, sim or help'],
    [['serve', 'extra'], 'arguments', 'unexpected argument "extra"'],
  ])('rejects %j in one line naming the option, the value and what is expected', (argv, option, text) => {
    const error = configError(argv);
    expect(error.option).toBe(option);
    expect(error.message).toContain(text);
    expect(error.message).not.toContain('\n');
  });

  it.each([
    [
      ['--operator-key', 'hunter2-short'],
      {},
      'invalid --operator-key: got a value of 13 characters (not shown: a secret), expected a key of at least 16 characters',
    ],
    [[], { OPERATOR_KEY: 'hunter2-short' }, '(from env OPERATOR_KEY): got a value of 13 characters'],
    [['--api-keys', ' , , '], {}, 'got a value of 5 characters'],
    [['--redis', 'redis://:hunter2@cache:port'], {}, 'got "redis://***@cache:port"'],
    [
      ['--redis', 'redis://a:7000,http://b/?password=hunter2'],
      {},
      'got "redis://a:7000,http://b/?password=***"',
    ],
    [['--upstream', 'ftp://user:hunter2@upstream.example'], {}, 'got "ftp://***@upstream.example"'],
    [['--otel-endpoint', 'grpc://user:hunter2@collector'], {}, 'got "grpc://***@collector"'],
  ])('never quotes a secret in the error of %j %j', (argv, env: NodeJS.ProcessEnv, text) => {
    const error = configError(argv, env);
    expect(error.message).toContain(text);
    expect(error.message).not.toContain('hunter2');
  });

  it('reads a fraction of the budget for failing open', () => {
    expect(serveConfig(['--fail-open-rps-fraction', '0.34'])).toMatchObject({ failOpenRpsFraction: 0.34 });
    expect(serveConfig([], { FAIL_OPEN_RPS_FRACTION: '1' })).toMatchObject({ failOpenRpsFraction: 1 });
  });

  it('reads the tracing options, by flag and from their environment twins', () => {
    expect(
      serveConfig(['--otel-endpoint', 'http://collector:4318', '--otel-sample-ratio', '1']),
    ).toMatchObject({ otelEndpoint: 'http://collector:4318', otelSampleRatio: 1 });
    expect(
      serveConfig([], { OTEL_ENDPOINT: 'https://collector.example/v1/traces', OTEL_SAMPLE_RATIO: '0.25' }),
    ).toMatchObject({ otelEndpoint: 'https://collector.example/v1/traces', otelSampleRatio: 0.25 });
  });

  it('reads the poll-side options from their environment twins', () => {
    expect(
      serveConfig([], {
        SCHEDULER: 'round-robin',
        MAX_AGE_MS: '5000',
        MAX_PRIVATE_MARKETS: '7',
        NEW_MARKETS_PER_SECOND_PER_KEY: '9',
      }),
    ).toMatchObject({
      scheduler: 'round-robin',
      maxAgeMs: 5000,
      isolation: { maxPrivateTargetsPerConnection: 7, newMarketsPerSecondPerKey: 9 },
    });
  });

  it('reads an empty environment variable as unset', () => {
    expect(serveConfig([], { PORT: '', API_KEYS: '' })).toMatchObject({ port: 8080, apiKeys: undefined });
  });

  it('refuses to start without an explicit upstream where UPSTREAM_REQUIRED=1 (the image), sim only when asked', () => {
    const required = { UPSTREAM_REQUIRED: '1' };
    expect(configError([], required).message).toMatch(/^missing --upstream: .*--upstream sim/);
    expect(configError(['serve', '--port', '0'], { ...required, UPSTREAM_URL: '' }).message).toMatch(
      /^missing --upstream/,
    );
    expect(serveConfig(['serve', '--upstream', 'sim'], required).upstream).toBe('sim');
    expect(serveConfig([], { ...required, UPSTREAM_URL: 'https://upstream.example' }).upstream).toBe(
      'https://upstream.example',
    );
    // Without it (npm start, the README) the simulator stays the default.
    expect(serveConfig([]).upstream).toBe('sim');
  });

  it('says when a bad value came from the environment', () => {
    expect(configError([], { UPSTREAM_RPS: '-1' }).message).toBe(
      'invalid --upstream-rps (from env UPSTREAM_RPS): got "-1", expected an integer from 1 to 100,000',
    );
  });

  it('refuses an empty resume buffer (a stream keeps at least its last update)', () => {
    expect(configError(['--resume-buffer', '0']).message).toBe(
      'invalid --resume-buffer: got "0", expected an integer from 1 to 1,000,000',
    );
  });

  it.each<[string[], Command]>([
    [['--help'], { command: 'help', topic: 'serve' }],
    [['-h'], { command: 'help', topic: 'serve' }],
    [['help'], { command: 'help', topic: undefined }],
    [['help', 'sim'], { command: 'help', topic: 'sim' }],
    [['sim', '--help'], { command: 'help', topic: 'sim' }],
    [['--version'], { command: 'version' }],
    [['serve', '--port', 'abc', '--version'], { command: 'version' }],
  ])('reads %j as a request for help or the version', (argv, expected) => {
    expect(parseCommandLine(argv, {})).toEqual(expected);
  });
});
