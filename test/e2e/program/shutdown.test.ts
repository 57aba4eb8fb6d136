/**
 * Graceful shutdown of the real program (docs/operations.md "Shutdown"): `market-relay serve` as a child
 * process; on SIGTERM or SIGINT (or `POST /drain` with the operator key) it drains: every WebSocket
 * client is told `going_away` and closed with 1001 within `--drain-ms`, and the process exits 0
 * within `--drain-ms` + 5 s. Its pino log tells the client's arrival, the drain and its 1001 close.
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

/** The drain window the program is given: short, for the test. */
const DRAIN_MS = 400;
const OPERATOR_KEY = 'operator-key-for-the-drain-test';

function startProgram(): Program {
  const args = ['serve', '--port', '0', '--book-poll-ms', '50', '--drain-ms', String(DRAIN_MS)];
  const child = spawn(process.execPath, [BIN, ...args, '--operator-key', OPERATOR_KEY], {
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

  /** Starts the program with one subscribed client; resolves with its URL and the client. */
  async function withClient(): Promise<{ url: string; client: ProtocolClient }> {
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
    const { markets } = (await (
      await fetch(`${url}/status/markets`, { headers: { authorization: `Bearer ${OPERATOR_KEY}` } })
    ).json()) as {
      markets: { id: string }[];
    };
    const client = await ProtocolClient.connect(url!);
    await client.request({ op: 'subscribe', channel: 'book', markets: [markets[0]!.id] });
    await waitFor('a snapshot', () => client.view('book', markets[0]!.id));
    await waitFor('the connect log line', () => logs.some((line) => line.event === 'client_connected'));
    return { url: url!, client };
  }

  /** The client was told to go within the window, then closed with 1001; the program exited 0 in time. */
  async function expectDrained(client: ProtocolClient, program: Program, sentAt: number): Promise<void> {
    const exited = await program.exit;
    await waitFor('the client to see the close', () => client.closeCode);
    expect(client.closeCode).toBe(1001);
    const [goingAway] = client.of('going_away');
    expect(goingAway?.reconnect_in_ms).toBeGreaterThanOrEqual(0);
    expect(goingAway?.reconnect_in_ms).toBeLessThan(DRAIN_MS);
    expect(exited).toMatchObject({ code: 0, signal: null });
    expect(exited.at - sentAt).toBeLessThan(DRAIN_MS + 5_000);
    expect(program.logs).toContainEqual(expect.objectContaining({ event: 'drain_started', connections: 1 }));
    expect(program.logs).toContainEqual(
      expect.objectContaining({ event: 'client_closed', code: 1001, by: 'relay' }),
    );
  }

  it.each(['SIGTERM', 'SIGINT'] as const)(
    '%s drains: going_away, then 1001, and exits 0 within --drain-ms + 5 s',
    async (signal) => {
      const { client } = await withClient();
      const sentAt = Date.now();
      program!.child.kill(signal);
      await expectDrained(client, program!, sentAt);
    },
  );

  it('POST /drain drains the same way with the operator key, and is refused without it', async () => {
    const { url, client } = await withClient();
    const refused = await fetch(`${url}/drain`, { method: 'POST' });
    expect(refused.status).toBe(401);
    expect(client.closeCode).toBeUndefined();
    const sentAt = Date.now();
    const accepted = await fetch(`${url}/drain`, {
      method: 'POST',
      headers: { authorization: `Bearer ${OPERATOR_KEY}` },
    });
    expect(accepted.status).toBe(202);
    expect(await accepted.json()).toEqual({ status: 'draining', drain_ms: DRAIN_MS, connections: 1 });
    await expectDrained(client, program!, sentAt);
  });
});
