/**
 * @module test/support/protocol-client
 * A deliberately plain protocol client for relay tests: it records every message, keeps each
 * stream's state from snapshot + updates with the pure core, and checks seq continuity and
 * checksums itself, so the tests check the relay without depending on the client SDK.
 */
import { once } from 'node:events';
import type { Socket } from 'node:net';
import WebSocket from 'ws';
import { applyBookUpdate, type BookState, bookChecksum } from '../../src/protocol/book.ts';
import type { BookData, PriceData, PriceUpdateData } from '../../src/protocol/messages.ts';
import { applyPriceUpdate } from '../../src/protocol/price.ts';
import { waitFor } from './wait-for.ts';

export type Message = Record<string, unknown> & { type: string };

export interface StreamView {
  epoch: string;
  seq: number;
  ts: string;
  state: BookState | PriceData;
  /** Number of updates applied since the last snapshot. */
  updates: number;
}

export class ProtocolClient {
  readonly messages: Message[] = [];
  readonly streams = new Map<string, StreamView>();
  /** Problems seen while applying messages: a seq gap, a checksum mismatch, an update without snapshot. */
  readonly violations: string[] = [];
  socket: Socket | undefined;
  closeCode: number | undefined;

  private constructor(readonly ws: WebSocket) {
    ws.on('upgrade', (response) => {
      this.socket = response.socket as Socket;
    });
    ws.on('message', (data) => this.#onMessage(JSON.parse(data.toString()) as Message));
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

  static key(channel: string, market: string, depth?: number | null): string {
    return channel === 'book' ? `book:${market}:${depth ?? 'full'}` : `${channel}:${market}`;
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

  view(channel: string, market: string, depth?: number | null): StreamView | undefined {
    return this.streams.get(ProtocolClient.key(channel, market, depth));
  }

  of(type: string): Message[] {
    return this.messages.filter((message) => message.type === type);
  }

  async close(): Promise<void> {
    if (this.ws.readyState === WebSocket.CLOSED) return;
    const closed = once(this.ws, 'close');
    this.ws.close();
    await closed;
  }

  #onMessage(message: Message): void {
    this.messages.push(message);
    if (message.type !== 'snapshot' && message.type !== 'update') return;
    const key = ProtocolClient.key(
      message.channel as string,
      message.market as string,
      message.depth as number | null,
    );
    const epoch = message.epoch as string;
    const seq = message.seq as number;
    if (message.type === 'snapshot') {
      this.streams.set(key, {
        epoch,
        seq,
        ts: message.ts as string,
        state: message.data as BookState,
        updates: 0,
      });
    } else {
      const view = this.streams.get(key);
      if (view === undefined) {
        this.violations.push(`${key}: update seq ${seq} before any snapshot`);
        return;
      }
      if (view.epoch !== epoch || seq !== view.seq + 1) {
        this.violations.push(`${key}: update ${epoch}/${seq} after ${view.epoch}/${view.seq}`);
      }
      view.state =
        message.channel === 'book'
          ? applyBookUpdate(view.state as BookState, message.data as BookData)
          : applyPriceUpdate(view.state as PriceData, message.data as PriceUpdateData);
      view.seq = seq;
      view.ts = message.ts as string;
      view.updates += 1;
    }
    if (message.channel === 'book') {
      const view = this.streams.get(key)!;
      const expected = bookChecksum(view.state as BookState);
      if (message.checksum !== expected) {
        this.violations.push(`${key}: checksum ${String(message.checksum)} != ${expected} at seq ${seq}`);
      }
    }
  }
}
