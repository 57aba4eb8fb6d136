/**
 * @module test/support/clients/protocol-client
 * A deliberately plain protocol client for relay tests: it records every message, keeps each
 * stream's state from snapshot + updates with the pure core, and checks seq continuity and
 * checksums itself, so the tests check the relay without depending on the client SDK. On a connection
 * that negotiated the compact encoding it decodes `snapshot` / `update` arrays with the stream
 * numbers its `subscribed` replies gave, and counts one it cannot place as a violation.
 */
import { once } from 'node:events';
import type { Socket } from 'node:net';
import WebSocket from 'ws';
import {
  type CompactStreamIdentity,
  decodeCompactStreamMessage,
} from '../../../packages/protocol/src/protocol/compact.ts';
import { waitFor } from '../wait-for.ts';
import { type Message, MessageRecorder } from './message-recorder.ts';

export type { Message } from './message-recorder.ts';

export class ProtocolClient extends MessageRecorder {
  socket: Socket | undefined;
  closeCode: number | undefined;
  /** Compact connections: what each stream number stands for, from the `subscribed` replies. */
  readonly streamNumbers = new Map<number, CompactStreamIdentity>();
  /** Stream messages that arrived as compact arrays. */
  compactMessages = 0;

  private constructor(readonly ws: WebSocket) {
    super();
    ws.on('upgrade', (response) => {
      this.socket = response.socket as Socket;
    });
    ws.on('message', (data) => this.#receive(JSON.parse(data.toString()) as unknown));
    ws.on('close', (code) => {
      this.closeCode = code;
    });
  }

  static async connect(
    url: string,
    options: WebSocket.ClientOptions = {},
    protocols: string[] = [],
  ): Promise<ProtocolClient> {
    const address = url.replace(/^http/, 'ws') + (url.includes('/v1/ws') ? '' : '/v1/ws');
    const ws = new WebSocket(address, protocols, options);
    const client = new ProtocolClient(ws);
    await once(ws, 'open');
    return client;
  }

  #receive(value: unknown): void {
    if (!Array.isArray(value)) {
      const message = value as Message;
      if (message.type === 'subscribed' && message.streams !== undefined) this.#learn(message);
      this.record(message);
      return;
    }
    const decoded = decodeCompactStreamMessage(value, this.streamNumbers);
    if (!decoded.ok) {
      this.violations.push(`${decoded.reason}: ${decoded.message}: ${JSON.stringify(value).slice(0, 80)}`);
      return;
    }
    this.compactMessages += 1;
    this.record(decoded.message as unknown as Message);
  }

  #learn(subscribed: Message): void {
    const channel = subscribed.channel as CompactStreamIdentity['channel'];
    const depth = subscribed.depth as CompactStreamIdentity['depth'];
    const group = typeof subscribed.group === 'string' ? { group: subscribed.group } : {};
    for (const [market, number] of Object.entries(subscribed.streams as Record<string, number>)) {
      this.streamNumbers.set(
        number,
        channel === 'book' ? { channel, market, depth: depth ?? null, ...group } : { channel, market },
      );
    }
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
