import { describe, expect, it } from 'vitest';
import { ConfigError, parseCommandLine } from '../src/config.ts';

describe('parseCommandLine', () => {
  it('gives the defaults of interface.md', () => {
    expect(parseCommandLine([], {})).toEqual({
      command: 'serve',
      config: {
        port: 8080,
        host: '127.0.0.1',
        upstream: 'sim',
        redis: undefined,
        bookPollMs: 1000,
        pricePollMs: 1000,
        upstreamConcurrency: 16,
        upstreamRps: 50,
        apiKeys: undefined,
        allowedOrigins: undefined,
        logLevel: 'info',
        simMarkets: 50,
        simSeed: 1,
        operatorHost: '127.0.0.1',
        statusFeed: {},
        edgeLimits: {},
        connectionLimits: {},
      },
    });
    expect(parseCommandLine(['sim'], {})).toEqual({
      command: 'sim',
      config: { port: 9090, host: '127.0.0.1', markets: 50, seed: 1, logLevel: 'info' },
    });
  });

  it('reads the operator endpoint and status feed options, validated', () => {
    const { config } = parseCommandLine(['--operator-port', '9100', '--max-status-viewers', '5'], {
      OPERATOR_KEY: 'k'.repeat(16),
      STATUS_VIEWER_BUFFER_BYTES: '65536',
    });
    expect(config).toMatchObject({
      operatorPort: 9100,
      operatorHost: '127.0.0.1',
      operatorKey: 'k'.repeat(16),
      statusFeed: { maxViewers: 5, viewerBufferBytes: 65_536 },
    });
    expect(() => parseCommandLine(['--operator-key', 'short'], {})).toThrow(/operator-key.*16 characters/);
    expect(() => parseCommandLine(['--max-status-viewers', '0'], {})).toThrow(/max-status-viewers/);
    expect(() => parseCommandLine([], { STATUS_VIEWER_BUFFER_BYTES: '10' })).toThrow(
      /status-viewer-buffer-bytes.*STATUS_VIEWER_BUFFER_BYTES/,
    );
  });

  it('reads the edge limits, validated', () => {
    const { config } = parseCommandLine(
      ['--max-connections-per-address', '7', '--trusted-proxy-depth', '1', '--close-grace-ms', '500'],
      { CONNECTION_RATE_PER_ADDRESS: '3', FLOOD_CLOSE_AFTER_MS: '2000' },
    );
    expect(config).toMatchObject({
      edgeLimits: { maxConnectionsPerAddress: 7, trustedProxyDepth: 1, connectionsPerSecondPerAddress: 3 },
      connectionLimits: { closeGraceMs: 500, floodCloseAfterMs: 2_000 },
    });
    expect(() => parseCommandLine(['--trusted-proxy-depth', '-1'], {})).toThrow(/trusted-proxy-depth/);
    expect(() => parseCommandLine([], { HEADERS_TIMEOUT_MS: '10' })).toThrow(
      /headers-timeout-ms.*HEADERS_TIMEOUT_MS/,
    );
    expect(() => parseCommandLine(['--max-pending-connections', 'many'], {})).toThrow(
      /max-pending-connections/,
    );
  });

  it('lets the flag win over its environment twin', () => {
    const { config } = parseCommandLine(['serve', '--port', '0', '--api-keys', 'a, b'], {
      PORT: '9999',
      API_KEYS: 'z',
      UPSTREAM_URL: 'http://upstream.example:8000/',
    });
    expect(config).toMatchObject({ port: 0, apiKeys: ['a', 'b'], upstream: 'http://upstream.example:8000' });
  });

  it.each([
    [['--port', '70000'], 'port'],
    [['--port', 'abc'], 'port'],
    [['--book-poll-ms', '0'], 'book-poll-ms'],
    [['--upstream', 'ftp://x'], 'upstream'],
    [['--redis', 'http://x'], 'redis'],
    [['--allowed-origins', 'not a url'], 'allowed-origins'],
    [['--log-level', 'loud'], 'log-level'],
    [['--nope', '1'], 'arguments'],
    [['dance'], 'command'],
  ])('rejects %j naming the option', (argv, option) => {
    try {
      parseCommandLine(argv, {});
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).option).toBe(option);
      expect((error as ConfigError).message).toMatch(new RegExp(`^invalid --${option}: `));
    }
  });

  it('validates environment values too', () => {
    expect(() => parseCommandLine([], { UPSTREAM_RPS: '-1' })).toThrow(
      /invalid --upstream-rps: "-1".*UPSTREAM_RPS/,
    );
  });
});
