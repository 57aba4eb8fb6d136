/**
 * @module test/client/relay-proxy
 * A WebSocket proxy between the SDK and a relay, for tests only: it forwards frames both ways,
 * lets a test rewrite or drop relay -> client frames, and exposes the relay-side socket so a test
 * can stop reading from the relay (a slow consumer the SDK cannot see).
 */
import { once } from 'node:events';
import type { AddressInfo, Socket } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';

export interface ProxyLink {
  /** The proxy's socket to the SDK. */
  client: WebSocket;
  /** The proxy's socket to the relay. */
  relay: WebSocket;
  /** The TCP socket under `relay`, known once the upgrade is done. */
  relaySocket: Socket | undefined;
}

export class RelayProxy {
  readonly links: ProxyLink[] = [];
  /** Rewrites a relay -> client frame; `undefined` drops it. */
  transform: (text: string) => string | undefined = (text) => text;
  readonly #server: WebSocketServer;

  private constructor(server: WebSocketServer, relayUrl: string) {
    this.#server = server;
    const target = relayUrl.replace(/^http/, 'ws');
    server.on('connection', (client, request) => {
      const authorization = request.headers.authorization;
      const relay = new WebSocket(target + (request.url ?? '/v1/ws'), {
        headers: authorization === undefined ? {} : { authorization },
      });
      const link: ProxyLink = { client, relay, relaySocket: undefined };
      this.links.push(link);
      const early: string[] = [];
      relay.on('upgrade', (response) => {
        link.relaySocket = response.socket as Socket;
      });
      relay.on('open', () => {
        for (const text of early.splice(0)) relay.send(text);
      });
      relay.on('message', (data) => {
        const text = this.transform(data.toString());
        if (text !== undefined && client.readyState === WebSocket.OPEN) client.send(text);
      });
      relay.on('close', () => client.terminate());
      relay.on('error', () => client.terminate());
      client.on('message', (data) => {
        if (relay.readyState === WebSocket.OPEN) relay.send(data.toString());
        else early.push(data.toString());
      });
      client.on('close', () => relay.terminate());
    });
  }

  static async start(relayUrl: string): Promise<RelayProxy> {
    const server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    await once(server, 'listening');
    return new RelayProxy(server, relayUrl);
  }

  get url(): string {
    return `ws://127.0.0.1:${(this.#server.address() as AddressInfo).port}/v1/ws`;
  }

  async close(): Promise<void> {
    for (const { client, relay } of this.links) {
      client.terminate();
      relay.terminate();
    }
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
