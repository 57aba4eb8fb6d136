/**
 * The command `market-relay serve` prints for a newcomer works when pasted into a shell: the
 * arguments wscat would receive are checked by running the line through bash. While upstream does
 * not answer, the terminal says why, once per cause.
 */
import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UpstreamNetworkError, UpstreamTimeoutError } from '../../packages/protocol/src/upstream/errors.ts';
import { printQuickStart, type QuickStartSource } from '../../src/http/quick-start.ts';
import { UpstreamClient } from '../../src/upstream/client.ts';
import { type Harness, startHarness } from '../support/harness.ts';
import { waitFor } from '../support/wait-for.ts';

const COMMAND = 'npx --yes wscat ';

/** The argv wscat would get from the printed line, as bash splits and expands it. */
async function wscatArguments(text: string, env: NodeJS.ProcessEnv): Promise<string[]> {
  const line = text.split('\n').find((candidate) => candidate.trim().startsWith(COMMAND));
  if (line === undefined) throw new Error(`no wscat command in:\n${text}`);
  const args = line.trim().slice(COMMAND.length);
  const { stdout } = await promisify(execFile)('bash', ['-c', `printf '%s\\n' ${args}`], {
    env: { PATH: process.env.PATH, ...env },
  });
  return stdout.trimEnd().split('\n');
}

async function printed(source: QuickStartSource): Promise<string> {
  let text = '';
  await printQuickStart(source, { write: (chunk) => (text += chunk), retryMs: 1 });
  return text;
}

/** A port nothing listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

describe('the quick-start command', () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness();
  });
  afterAll(() => harness.stop());

  it('subscribes to a live market without a key', async () => {
    const text = await printed({ ...harness.relay, apiKeys: undefined });
    const [flag, socket, x, subscribe] = await wscatArguments(text, {});
    expect([flag, x]).toEqual(['-c', '-x']);
    expect(socket).toBe(`${harness.relay.url.replace('http', 'ws')}/v1/ws`);
    expect(JSON.parse(subscribe ?? '')).toMatchObject({ op: 'subscribe', channel: 'book', depth: 10 });
  });

  it('carries the API key from the shell when keys are required', async () => {
    const text = await printed({ ...harness.relay, apiKeys: ['real-key'] });
    expect(text).not.toContain('real-key');
    expect(text).toContain('export API_KEY=');
    const [, socket] = await wscatArguments(text, { API_KEY: 'k-123' });
    expect(socket).toBe(`${harness.relay.url.replace('http', 'ws')}/v1/ws?token=k-123`);
  });
});

describe('the quick-start text while upstream does not answer', () => {
  const refused = () =>
    new UpstreamNetworkError('GET /api/markets', 'connect ECONNREFUSED 127.0.0.1:9', {
      cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' }),
    });
  const timedOut = () => new UpstreamTimeoutError('GET /api/markets', 'no answer within 5000 ms');

  it('prints each new cause once, without the URL credentials, then the command', async () => {
    const answers: (() => Error)[] = [refused, refused, refused, timedOut, timedOut, refused];
    const text = await printed({
      url: 'http://127.0.0.1:8080',
      upstreamUrl: 'http://user:secret@upstream.example/v0/?token=t',
      client: {
        markets: async () => {
          const failure = answers.shift();
          if (failure !== undefined) throw failure();
          return { markets: [{ market_id: 'm-1', title: 'A market' }] };
        },
      },
    });
    expect(text.split('\n')).toEqual([
      'market-relay status page: http://127.0.0.1:8080/',
      'connect a client to ws://127.0.0.1:8080/v1/ws (upstream has not listed its markets yet)',
      'upstream http://upstream.example/v0: connection refused; retrying',
      'upstream http://upstream.example/v0: no answer within 5000 ms; retrying',
      'upstream http://upstream.example/v0: connection refused; retrying',
      'upstream http://upstream.example/v0 answers now',
      'watch a live book (A market) for 30 s:',
      expect.stringContaining(COMMAND),
      '',
    ]);
    expect(text).not.toContain('secret');
  });

  it('names a refused connection of a real client, and stops retrying when aborted', async () => {
    const upstreamUrl = `http://127.0.0.1:${await closedPort()}`;
    const client = new UpstreamClient({ baseUrl: upstreamUrl, retries: 0 });
    const stop = new AbortController();
    let text = '';
    let calls = 0;
    try {
      const done = printQuickStart(
        {
          url: 'http://127.0.0.1:8080',
          upstreamUrl,
          client: {
            markets: (query, init) => {
              calls += 1;
              return client.markets(query, init);
            },
          },
        },
        { write: (chunk) => (text += chunk), signal: stop.signal, retryMs: 1 },
      );
      await waitFor('three attempts at the market listing', () => calls >= 3);
      stop.abort();
      await done;
      expect(text.match(/retrying/g)).toEqual(['retrying']);
      expect(text).toContain(`upstream ${upstreamUrl}: connection refused; retrying\n`);
    } finally {
      await client.close();
    }
  });
});
