/**
 * Logging can never stop the relay (observability/log-sink.ts): `market-relay serve` at `debug` as
 * a child process whose stdout and stderr pipes are closed by their reader (a log shipper that died)
 * keeps answering `/health` while it logs, and exits 0 within 5 s of SIGTERM.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { waitFor } from '../../support/wait-for.ts';

const BIN = fileURLToPath(new URL('../../../bin/market-relay.js', import.meta.url));

describe('a log destination that goes away', () => {
  it('costs log lines, never /health or shutdown', async () => {
    const child = spawn(
      process.execPath,
      [BIN, 'serve', '--port', '0', '--log-level', 'debug', '--book-poll-ms', '50'],
      { env: { ...process.env, SIM_MARKETS: '5' } },
    );
    const exit = once(child, 'exit').then(([code]) => ({ code: code as number | null, at: Date.now() }));
    try {
      let stderr = '';
      child.stderr.setEncoding('utf8');
      child.stderr.on('data', (chunk: string) => {
        stderr += chunk;
      });
      child.stdout.resume();
      const url = await waitFor(
        'the relay to listen',
        () => /listening on (http:\/\/\S+)/.exec(stderr)?.[1],
        {
          timeoutMs: 20_000,
        },
      );
      // The reader goes away: both pipes closed on our side.
      child.stdout.destroy();
      child.stderr.destroy();

      // Clients come and go, each a few log lines, while /health is asked.
      const statuses: number[] = [];
      for (let i = 0; i < 6; i += 1) {
        const ws = new WebSocket(`${url.replace('http', 'ws')}/v1/ws`);
        await once(ws, 'open');
        ws.send(JSON.stringify({ op: 'subscribe', channel: 'nonsense', markets: ['x'] }));
        ws.close();
        const response = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2_000) });
        statuses.push(response.status);
        await response.body?.cancel();
      }
      expect(statuses).toEqual([200, 200, 200, 200, 200, 200]);

      const signalledAt = Date.now();
      child.kill('SIGTERM');
      const { code, at } = await exit;
      expect(code).toBe(0);
      expect(at - signalledAt).toBeLessThan(5_000);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 30_000);
});
