/**
 * The command `market-relay serve` prints for a newcomer works when pasted into a shell: run by bash
 * as printed, its output a pipe (not a terminal), it prints the live book's snapshot from the relay;
 * with keys, the arguments curl would receive carry the key from the shell. While upstream does
 * not answer, the terminal says why, once per cause.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { printQuickStart, type QuickStartSource } from '../../src/http/quick-start.ts';
import { UpstreamClient } from '../../src/upstream/client.ts';
import { UpstreamNetworkError, UpstreamTimeoutError } from '../../src/upstream/errors.ts';
import { type Harness, startHarness } from '../support/harness.ts';
import { waitFor } from '../support/wait-for.ts';

const COMMAND = 'curl ';

/** The printed command runs curl: in CI it is part of the job's set-up (.ci/run), elsewhere may be absent. */
const curlFound = (process.env.PATH ?? '')
  .split(delimiter)
  .some((folder) => existsSync(join(folder, 'curl')));
const runCurl = curlFound || process.env.CI !== undefined;
if (!runCurl) process.stdout.write('quick-start command run skipped: install curl (apt-get install curl)\n');

/** The printed command line, without its indent. */
function commandLine(text: string): string {
  const line = text.split('\n').find((candidate) => candidate.trim().startsWith(COMMAND));
  if (line === undefined) throw new Error(`no curl command in:\n${text}`);
  return line.trim();
}

/** The argv curl would get from the printed line, as bash splits and expands it. */
async function curlArguments(text: string, env: NodeJS.ProcessEnv): Promise<string[]> {
  const args = commandLine(text).slice(COMMAND.length);
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

  it.skipIf(!runCurl)('prints the live book when pasted, into a pipe', async () => {
    const text = await printed({ ...harness.relay, apiKeys: undefined });
    const child = spawn('bash', ['-c', commandLine(text)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
    });
    try {
      await waitFor("the book snapshot on curl's output", () => output.includes('"type":"snapshot"'));
    } finally {
      child.kill();
    }
    const snapshot = output.split('\n').find((line) => line.includes('"type":"snapshot"'))!;
    expect(JSON.parse(snapshot.replace(/^data: /, ''))).toMatchObject({ channel: 'book', depth: 10 });
  });

  it('carries the API key from the shell when keys are required', async () => {
    const text = await printed({ ...harness.relay, apiKeys: ['real-key'] });
    expect(text).not.toContain('real-key');
    expect(text).toContain('export API_KEY=');
    const args = await curlArguments(text, { API_KEY: 'k-123' });
    expect(args.slice(0, 5)).toEqual(['-N', '--max-time', '30', '-H', 'Authorization: Bearer k-123']);
    const url = new URL(args[5] ?? '');
    expect(url.origin + url.pathname).toBe(`${harness.relay.url}/v1/sse`);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({ channel: 'book', depth: '10' });
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
