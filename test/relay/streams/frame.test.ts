import { once } from 'node:events';
import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { encodeTextFrame } from '../../../src/relay/streams/frame.ts';
import { waitFor } from '../../support/wait-for.ts';

describe('encodeTextFrame', () => {
  let server: WebSocketServer;
  let raw: Socket;
  let client: WebSocket;
  const received: string[] = [];

  beforeAll(async () => {
    server = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: false });
    await once(server, 'listening');
    const accepted = once(server, 'connection');
    const { port } = server.address() as { port: number };
    client = new WebSocket(`ws://127.0.0.1:${port}`);
    client.on('message', (data, isBinary) => received.push(isBinary ? '<binary>' : data.toString()));
    const [, request] = (await accepted) as [WebSocket, { socket: Socket }];
    raw = request.socket;
    await once(client, 'open');
  });
  afterAll(async () => {
    client.close();
    await once(client, 'close');
    server.close();
  });

  it.each([0, 1, 125, 126, 65_535, 65_536, 200_000])(
    'frames %i bytes that a WebSocket client reads back',
    async (size) => {
      const text = 'é'.repeat(Math.floor(size / 2)) + 'x'.repeat(size % 2); // multi-byte UTF-8 on purpose
      const { wire, payloadOffset } = encodeTextFrame(text);
      expect(wire.length - payloadOffset).toBe(Buffer.byteLength(text));
      const before = received.length;
      raw.write(wire);
      await waitFor('the message', () => received.length === before + 1);
      expect(received.at(-1)).toBe(text);
    },
  );
});
