/**
 * @module test/support/protocol-client
 * A deliberately plain protocol client for relay tests: it records every message, keeps each
 * stream's state from snapshot + updates with the pure core, and checks seq continuity and
 * checksums itself, so the tests check the relay without depending on the client SDK.
 */
import { once } from 'node:events';
import type { Socket } from 'node:net';
import WebSocket from 'ws';
import { type Message, MessageRecorder } from './message-recorder.ts';
import { waitFor } from './wait-for.ts';

export type { Message, StreamView } from './message-recorder.ts';

export class ProtocolClient extends MessageRecorder {
  socket: Socket | undefined;
  closeCode: number | undefined;

  private constructor(readonly ws: WebSocket) {
    super();
    ws.on('upgrade', (response) => {
      this.socket = response.socket as Socket;
    });
    ws.on('message', (data) => this.record(JSON.parse(data.toString()) as Message));
    ws.on('close', (code) => {
      this.closeCode = code;
    });
  }

  static async connect(url: string, options: WebSocket.ClientOptions = {}): Promise<ProtocolClient> {
    const ws = new WebSocket(url.replace(/^http/, 'ws') + (url.includes('/v1/ws') ? '' : '/v1/ws'), options);
    const client = new ProtocolClient(ws);
    await once(ws, 'open');
    return client;
  }

  send(request: unknown): void {
    this.ws.send(typeof request === 'string' ? request : JSON.stringify(request));
  }

  /** Sends a request with an id and resolves with the reply (or error) carrying that id. */
  async request(request: Record<string, unknown>): Promise<Message> {
    const id = `r${Math.random().toString(36).slice(2)}`;
    const from = this.messages.length;
    this.send({ ...request, id });
    return waitFor(`reply to ${JSON.stringify(request).slice(0, 80)}`, () =>
      this.messages.slice(from).find((message) => message.id === id),
    );
  }

  async close(): Promise<void> {
    if (this.ws.readyState === WebSocket.CLOSED) return;
    const closed = once(this.ws, 'close');
    this.ws.close();
    await closed;
  }
}
