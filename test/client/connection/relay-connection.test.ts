/**
 * The connection's own edges without a relay: a server that accepts TCP but never answers the
 * upgrade. The watchdog must abandon the handshake and retry, and closing a socket that is still
 * connecting must not surface `ws`'s abort error as an uncaught exception (it once did).
 */
import { once } from 'node:events';
import { type AddressInfo, createServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { SILENT_SOCKET_CLOSE } from '../../../packages/client/src/connection/relay-connection.ts';
import { connect } from '../../../packages/client/src/node.ts';
import { waitFor } from '../../support/wait-for.ts';

describe('client connection', () => {
  const sockets: Socket[] = [];
  const server = createServer((socket) => sockets.push(socket));
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.destroy();
    if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('gives up on a handshake that never completes, retries, and closes cleanly while connecting', async () => {
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/v1/ws`;
    const client = connect(url, { deadAfterMs: 50, backoff: { baseMs: 5, maxMs: 10 } });
    const closes: number[] = [];
    const attempts: number[] = [];
    client.on('close', ({ code }) => closes.push(code));
    client.on('reconnecting', ({ attempt }) => attempts.push(attempt));
    await waitFor('two abandoned handshakes', () => closes.length >= 2);
    expect(closes.slice(0, 2)).toEqual([SILENT_SOCKET_CLOSE, SILENT_SOCKET_CLOSE]);
    expect(attempts.slice(0, 2)).toEqual([1, 2]);

    const book = client.subscribeBook('3f2b8c1e-5d4a-4e6b-9c7d-1a2b3c4d5e6f');
    // The server has accepted a socket the SDK has not abandoned yet: it is mid-handshake.
    await waitFor('a socket that is connecting', () => sockets.length > closes.length);
    await client.close();
    expect(client.status).toBe('closed');
    expect(book.status).toBe('closed');
    // An abort error emitted after close would fail the run as an uncaught exception.
    await new Promise((resolve) => setImmediate(resolve));
  });

  it('refuses an empty list of relay URLs at once', () => {
    expect(() => connect([])).toThrow(TypeError);
  });

  it('says what a close code means: a slow consumer learns why it was dropped', async () => {
    const relay = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    await once(relay, 'listening');
    relay.on('connection', (ws) => ws.close(4008, 'slow consumer'));
    const client = connect(`ws://127.0.0.1:${(relay.address() as AddressInfo).port}/v1/ws`, {
      backoff: { baseMs: 5_000, maxMs: 5_000 },
    });
    const closes: { code: number; meaning: string; willReconnect: boolean }[] = [];
    client.on('close', (event) => closes.push(event));
    await waitFor('the close', () => closes[0]);
    expect(closes[0]).toMatchObject({ code: 4008, willReconnect: true });
    expect(closes[0]!.meaning).toMatch(/^slow consumer: this client did not read fast enough/);
    await client.close();
    await new Promise<void>((resolve) => relay.close(() => resolve()));
  });
});
