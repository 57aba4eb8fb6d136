/**
 * Graceful shutdown of the real program (docs/operations.md "Shutdown"): `market-relay serve` as a child
 * process; on SIGTERM or SIGINT every WebSocket client is closed with 1001, and the process exits 0
 * within 5 s. Its pino log tells the client's arrival and its 1001 close.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { ProtocolClient } from '../../support/clients/protocol-client.ts';
import { waitFor } from '../../support/wait-for.ts';

const BIN = fileURLToPath(new URL('../../../bin/market-relay.js', import.meta.url));

type LogLine = Record<string, unknown> & { msg?: string };

interface Program {
  child: ChildProcessWithoutNullStreams;
  logs: LogLine[];
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
}

function startProgram(): Program {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--book-poll-ms', '50'], {
    env: { ...process.env, LOG_LEVEL: 'info', SIM_MARKETS: '5' },
  });
  const logs: LogLine[] = [];
  let pending = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    pending += chunk;
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      try {
        logs.push(JSON.parse(line) as LogLine);
      } catch {
        // Not a log line (the program writes its pino log as JSON lines to stdout).
      }
    }
  });
  child.stderr.resume();
  const exit = once(child, 'exit').then(([code, signal]) => ({
    code: code as number | null,
    signal: signal as NodeJS.Signals | null,
    at: Date.now(),
  }));
  return { child, logs, exit };
}

describe('graceful shutdown of market-relay serve', () => {
  let program: Program | undefined;
  afterEach(() => {
    if (program !== undefined && program.child.exitCode === null) program.child.kill('SIGKILL');
    program = undefined;
  });

  it.each(['SIGTERM', 'SIGINT'] as const)(
    '%s closes clients with 1001 and exits 0 within 5 s',
    async (signal) => {
      program = startProgram();
      const { logs } = program;
      const url = await waitFor(
        'the listening line',
        () => {
          for (const line of logs) {
            const match = /listening on (http:\/\/\S+)/.exec(line.msg ?? '');
            if (match !== null) return match[1];
          }
          return undefined;
        },
        { timeoutMs: 20_000, everyMs: 20 },
      );
      const { markets } = (await (await fetch(`${url}/status/markets`)).json()) as {
        markets: { id: string }[];
      };
      const client = await ProtocolClient.connect(url!);
      await client.request({ op: 'subscribe', channel: 'book', markets: [markets[0]!.id] });
      await waitFor('a snapshot', () => client.view('book', markets[0]!.id));
      await waitFor('the connect log line', () => logs.some((line) => line.event === 'client_connected'));

      const sentAt = Date.now();
      program.child.kill(signal);
      const exited = await program.exit;
      await waitFor('the client to see the close', () => client.closeCode);
      expect(client.closeCode).toBe(1001);
      expect(exited).toMatchObject({ code: 0, signal: null });
      expect(exited.at - sentAt).toBeLessThan(5_000);
      expect(logs).toContainEqual(
        expect.objectContaining({ event: 'client_closed', code: 1001, by: 'relay' }),
      );
    },
  );
});
