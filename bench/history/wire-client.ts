/**
 * @module bench/history/wire-client
 * One WebSocket client of the history scenario, in the runner's process (its CPU is not the
 * relay's): it speaks the wire of docs/protocol.md as any client would, counts the stream messages
 * it receives, keeps the longest wait between two of them (a live book's freshness as its reader
 * sees it) and lets the arms wait for a message that matches, with a deadline.
 */
import { once } from 'node:events';
import WebSocket from 'ws';

export type WireMessage = Record<string, unknown> & { type?: string; id?: unknown };

interface Waiter {
  match: (message: WireMessage) => boolean;
  resolve: (message: WireMessage) => void;
}

export class WireClient {
  readonly #ws: WebSocket;
  readonly #waiters = new Set<Waiter>();
  /** Stream messages (`snapshot` and `update`) received since the last reset. */
  streamMessages = 0;
  /** The longest wait between two stream messages since the last reset (ms). */
  longestWaitMs = 0;
  #lastStreamAt: number | undefined;
  /** Called for every message received, after the counts. */
  onMessage: ((message: WireMessage, at: number) => void) | undefined;

  private constructor(ws: WebSocket) {
    this.#ws = ws;
    ws.on('message', (data: Buffer) => this.#receive(JSON.parse(data.toString('utf8')) as WireMessage));
  }

  static async connect(url: string): Promise<WireClient> {
    const ws = new WebSocket(url);
    await once(ws, 'open');
    return new WireClient(ws);
  }

  send(request: Record<string, unknown>): void {
    this.#ws.send(JSON.stringify(request));
  }

  /** The first message from now on that `match` accepts; rejects after `timeoutMs`. */
  next(what: string, match: (message: WireMessage) => boolean, timeoutMs: number): Promise<WireMessage> {
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        match,
        resolve: (message) => {
          clearTimeout(timer);
          resolve(message);
        },
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(waiter);
        reject(new Error(`no ${what} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#waiters.add(waiter);
    });
  }

  /** The reply to the request `id` (its echo, or an `error` naming it). */
  reply(id: string, timeoutMs = 15_000): Promise<WireMessage> {
    return this.next(`reply to ${id}`, (message) => message.id === id, timeoutMs);
  }

  resetCounts(): void {
    this.streamMessages = 0;
    this.longestWaitMs = 0;
    this.#lastStreamAt = undefined;
  }

  close(): void {
    this.#ws.terminate();
  }

  #receive(message: WireMessage): void {
    const at = performance.now();
    if (message.type === 'snapshot' || message.type === 'update') {
      this.streamMessages += 1;
      if (this.#lastStreamAt !== undefined)
        this.longestWaitMs = Math.max(this.longestWaitMs, at - this.#lastStreamAt);
      this.#lastStreamAt = at;
    }
    this.onMessage?.(message, at);
    for (const waiter of this.#waiters) {
      if (!waiter.match(message)) continue;
      this.#waiters.delete(waiter);
      waiter.resolve(message);
    }
  }
}
