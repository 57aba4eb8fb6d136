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
        scheduler: 'freshness',
        maxAgeMs: 30_000,
        isolation: {
          maxPrivateTargetsPerConnection: 200,
          maxPrivateTargetsPerKey: 1000,
          newMarketsPerSecond: 20,
          newMarketsPerSecondPerKey: 50,
          lookupsPerSecond: 2,
        },
        apiKeys: undefined,
        allowedOrigins: undefined,
        logLevel: 'info',
        simMarkets: 50,
        simSeed: 1,
      },
    });
    expect(parseCommandLine(['sim'], {})).toEqual({
      command: 'sim',
      config: { port: 9090, host: '127.0.0.1', markets: 50, seed: 1, logLevel: 'info' },
    });
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
    [['--scheduler', 'fifo'], 'scheduler'],
    [['--max-age-ms', '500'], 'max-age-ms'], // below --book-poll-ms 1000
    [['--max-private-markets', '0'], 'max-private-markets'],
    [['--new-markets-per-second', '1.5'], 'new-markets-per-second'],
    [['--unknown-lookups-per-second', 'x'], 'unknown-lookups-per-second'],
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

  it('reads the poll-side options from their environment twins', () => {
    const { config } = parseCommandLine([], {
      SCHEDULER: 'round-robin',
      MAX_AGE_MS: '5000',
      MAX_PRIVATE_MARKETS: '7',
      NEW_MARKETS_PER_SECOND_PER_KEY: '9',
    });
    expect(config).toMatchObject({
      scheduler: 'round-robin',
      maxAgeMs: 5000,
      isolation: { maxPrivateTargetsPerConnection: 7, newMarketsPerSecondPerKey: 9 },
    });
  });

  it('validates environment values too', () => {
    expect(() => parseCommandLine([], { UPSTREAM_RPS: '-1' })).toThrow(
      /invalid --upstream-rps: "-1".*UPSTREAM_RPS/,
    );
  });
});
