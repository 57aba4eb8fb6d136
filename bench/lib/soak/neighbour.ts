/**
 * @module bench/lib/soak/neighbour
 * The well-behaved client of an attack scenario (bench/attack-soak.ts): from a loopback address of
 * its own (so the relay counts it in another address group than the attacker's), it watches the
 * depth-10 books of a few busy markets and keeps the time of every book message, so that the longest
 * wait between two of them can be read for any window.
 */
import { once } from 'node:events';
import WebSocket from 'ws';
import { wsUrl } from './attackers.ts';

export class Neighbour {
  readonly #ws: WebSocket;
  readonly #arrivals = new Map<string, number[]>();
  readonly #markets: readonly string[];
  #closedWith: number | undefined;

  private constructor(ws: WebSocket, markets: readonly string[]) {
    this.#ws = ws;
    this.#markets = markets;
    for (const market of markets) this.#arrivals.set(market, []);
    ws.on('message', (data) => {
      const message = JSON.parse(data.toString()) as Record<string, unknown>;
      if (message.channel !== 'book' || (message.type !== 'snapshot' && message.type !== 'update')) return;
      this.#arrivals.get(String(message.market))?.push(performance.now());
    });
    ws.on('close', (code) => {
      this.#closedWith = code;
    });
    ws.on('error', () => {});
  }

  static async connect(url: string, markets: readonly string[], localAddress: string): Promise<Neighbour> {
    const ws = new WebSocket(wsUrl(url), { localAddress });
    await once(ws, 'open');
    const neighbour = new Neighbour(ws, markets);
    ws.send(JSON.stringify({ op: 'subscribe', channel: 'book', markets, depth: 10 }));
    return neighbour;
  }

  /** Every market has had a book message. */
  get ready(): boolean {
    return [...this.#arrivals.values()].every((times) => times.length > 0);
  }

  get closedWith(): number | undefined {
    return this.#closedWith;
  }

  /** The longest wait, ms, between two book messages of one market within [from, to) (performance.now()). */
  longestWait(from: number, to: number): number {
    let longest = 0;
    for (const market of this.#markets) {
      let previous = from;
      for (const at of this.#arrivals.get(market) ?? []) {
        if (at < from) continue;
        if (at >= to) break;
        longest = Math.max(longest, at - previous);
        previous = at;
      }
      longest = Math.max(longest, to - previous);
    }
    return longest;
  }

  close(): void {
    this.#ws.close();
  }
}
