/**
 * The command `market-relay serve` prints for a newcomer works when pasted into a shell: the
 * arguments wscat would receive are checked by running the line through bash.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quickStartText } from '../../src/http/quick-start.ts';
import { type Harness, startHarness } from '../support/harness.ts';

/** The argv wscat would get from the printed line, as bash splits and expands it. */
async function wscatArguments(text: string, env: NodeJS.ProcessEnv): Promise<string[]> {
  const line = text.split('\n').find((candidate) => candidate.trim().startsWith('npx wscat '));
  if (line === undefined) throw new Error(`no wscat command in:\n${text}`);
  const args = line.trim().slice('npx wscat '.length);
  const { stdout } = await promisify(execFile)('bash', ['-c', `printf '%s\\n' ${args}`], {
    env: { PATH: process.env.PATH, ...env },
  });
  return stdout.trimEnd().split('\n');
}

describe('the quick-start command', () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness();
  });
  afterAll(() => harness.stop());

  it('subscribes to a live market without a key', async () => {
    const text = await quickStartText({ url: harness.relay.url, client: harness.relay.client });
    const [flag, socket, x, subscribe] = await wscatArguments(text, {});
    expect([flag, x]).toEqual(['-c', '-x']);
    expect(socket).toBe(`${harness.relay.url.replace('http', 'ws')}/v1/ws`);
    expect(JSON.parse(subscribe ?? '')).toMatchObject({ op: 'subscribe', channel: 'book', depth: 10 });
  });

  it('carries the API key from the shell when keys are required', async () => {
    const text = await quickStartText({
      url: harness.relay.url,
      client: harness.relay.client,
      apiKeys: ['real-key'],
    });
    expect(text).not.toContain('real-key');
    expect(text).toContain('export API_KEY=');
    const [, socket] = await wscatArguments(text, { API_KEY: 'k-123' });
    expect(socket).toBe(`${harness.relay.url.replace('http', 'ws')}/v1/ws?token=k-123`);
  });
});
