/**
 * @module test/client/fake-relay
 * A scripted relay for the SDK's unit tests: a WebSocket server on port 0 that records every
 * request the SDK sends, answers each `subscribe`/`unsubscribe` as the relay does, and sends
 * whatever stream messages a test gives it (docs/protocol.md), to the newest connection.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';
import type { ServerMessage, SubscribeRequest, UnsubscribeRequest } from '../../src/protocol/messages.ts';
import { waitFor } from '../support/wait-for.ts';

export type RecordedRequest = SubscribeRequest | UnsubscribeRequest;

/** The envelope fields a test does not care about. */
export const stamp = { ts: '2026-03-02T14:05:09.120Z', rts: '2026-03-02T14:05:09.171Z' };

export class FakeRelay {
  readonly requests: RecordedRequest[] = [];
  readonly sockets: WebSocket[] = [];
  readonly #server: WebSocketServer;

  private constructor(server: WebSocketServer) {
    this.#server = server;
    server.on('connection', (socket) => {
      this.sockets.push(socket);
      socket.on('message', (data) => this.#answer(socket, JSON.parse(data.toString()) as RecordedRequest));
    });
  }

  static async start(): Promise<FakeRelay> {
    const server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    await once(server, 'listening');
    return new FakeRelay(server);
  }

  get url(): string {
    return `ws://127.0.0.1:${(this.#server.address() as AddressInfo).port}/v1/ws`;
  }

  /** Sends to the newest connection (the one the SDK uses). */
  send(message: ServerMessage | Record<string, unknown>): void {
    const socket = this.sockets.at(-1);
    if (socket === undefined || socket.readyState !== WebSocket.OPEN) throw new Error('no open connection');
    socket.send(JSON.stringify(message));
  }

  /** The `n`-th subscribe (0-based) of `channel`, once the SDK has sent it. */
  async subscribe(channel: string, n = 0): Promise<SubscribeRequest> {
    return waitFor(`subscribe #${n} of ${channel}`, () => {
      const matching = this.requests.filter(
        (request): request is SubscribeRequest => request.op === 'subscribe' && request.channel === channel,
      );
      return matching[n];
    });
  }

  /** Cuts every connection as a network failure would; the SDK reconnects. */
  dropConnections(): void {
    for (const socket of this.sockets) socket.terminate();
  }

  async close(): Promise<void> {
    this.dropConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #answer(socket: WebSocket, request: RecordedRequest): void {
    this.requests.push(request);
    const { id, channel, markets } = request;
    if (request.op === 'unsubscribe') {
      socket.send(JSON.stringify({ type: 'unsubscribed', id, channel, markets }));
      return;
    }
    // A resume this fake cannot honour (it keeps no history): the stream starts over with a snapshot.
    const recovered =
      request.resume === undefined
        ? {}
        : { recovered: Object.fromEntries(Object.keys(request.resume).map((market) => [market, false])) };
    socket.send(JSON.stringify({ type: 'subscribed', id, channel, markets, ...recovered }));
  }
}
