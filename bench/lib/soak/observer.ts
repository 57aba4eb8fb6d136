/**
 * @module bench/lib/soak/observer
 * The well-behaved client of a soak scenario: subscribed to the book and price of a few markets, it
 * reads everything, pings four times a second, and reports for a window its largest gap between two
 * messages of one stream, its ping round trips and how many of its streams are `live`.
 */
import { once } from 'node:events';
import WebSocket from 'ws';
import { percentile } from '../latency.ts';
import { wsUrl } from './attackers.ts';

export interface ObserverReport {
  largestGapMs: number;
  pingP50Ms: number;
  pingP99Ms: number;
  live: number;
  streams: number;
  /** Close code when the observer itself lost its connection. */
  closedWith: number | undefined;
}

export class Observer {
  readonly #ws: WebSocket;
  readonly #lastSeen = new Map<string, number>();
  readonly #state = new Map<string, string>();
  readonly #pingSentAt = new Map<string, number>();
  #rtts: number[] = [];
  #largestGapMs = 0;
  #pings = 0;
  #closedWith: number | undefined;
  readonly #timer: NodeJS.Timeout;

  private constructor(ws: WebSocket) {
    this.#ws = ws;
    ws.on('message', (data) => this.#onMessage(JSON.parse(data.toString()) as Record<string, unknown>));
    ws.on('close', (code) => {
      this.#closedWith = code;
    });
    ws.on('error', () => {});
    this.#timer = setInterval(() => this.#ping(), 250);
  }

  static async connect(url: string, markets: string[]): Promise<Observer> {
    const ws = new WebSocket(wsUrl(url));
    await once(ws, 'open');
    const observer = new Observer(ws);
    ws.send(JSON.stringify({ op: 'subscribe', channel: 'book', markets, depth: 10 }));
    ws.send(JSON.stringify({ op: 'subscribe', channel: 'price', markets }));
    return observer;
  }

  /** Starts a measurement window: gaps are counted from now. */
  startWindow(): void {
    const now = performance.now();
    for (const key of this.#lastSeen.keys()) this.#lastSeen.set(key, now);
    this.#largestGapMs = 0;
    this.#rtts = [];
  }

  report(): ObserverReport {
    const now = performance.now();
    let largestGapMs = this.#largestGapMs;
    for (const seen of this.#lastSeen.values()) largestGapMs = Math.max(largestGapMs, now - seen);
    return {
      largestGapMs,
      pingP50Ms: percentile(this.#rtts, 50),
      pingP99Ms: percentile(this.#rtts, 99),
      live: [...this.#state.values()].filter((state) => state === 'live').length,
      streams: this.#state.size,
      closedWith: this.#closedWith,
    };
  }

  close(): void {
    clearInterval(this.#timer);
    this.#ws.close();
  }

  #ping(): void {
    if (this.#ws.readyState !== WebSocket.OPEN) return;
    const id = `p${this.#pings++}`;
    this.#pingSentAt.set(id, performance.now());
    this.#ws.send(JSON.stringify({ op: 'ping', id }));
  }

  #onMessage(message: Record<string, unknown>): void {
    const now = performance.now();
    if (message.type === 'pong') {
      const sentAt = this.#pingSentAt.get(String(message.id));
      this.#pingSentAt.delete(String(message.id));
      if (sentAt !== undefined) this.#rtts.push(now - sentAt);
      return;
    }
    if (message.type !== 'snapshot' && message.type !== 'update' && message.type !== 'status') return;
    const key = `${String(message.channel)}:${String(message.market)}`;
    if (message.type === 'status') {
      this.#state.set(key, String(message.state));
      return;
    }
    if (!this.#state.has(key) || message.type === 'snapshot') this.#state.set(key, 'live');
    const last = this.#lastSeen.get(key);
    if (last !== undefined) this.#largestGapMs = Math.max(this.#largestGapMs, now - last);
    this.#lastSeen.set(key, now);
  }
}
