/**
 * @module bench/lib/resuming-clients
 * Clients that do what the client SDK does when their relay goes away: reconnect to another relay
 * and `resume` every stream from its last (epoch, seq). They parse every message (the cluster
 * scenario counts events, not CPU) and count what a resume cost: snapshots sent again, resumes
 * recovered, gaps in seq.
 */
import { once } from 'node:events';
import { WebSocket } from 'ws';

export interface Selection {
  channel: 'book' | 'price';
  markets: string[];
  depth?: number | null;
}

export interface ResumeCounts {
  /** Streams resumed (one per stream per move), and of those the relay recovered. */
  resumes: number;
  recovered: number;
  /** Snapshots received after a move: each is a book or price sent again from scratch. */
  snapshotsResent: number;
  /** Updates whose seq did not follow the last one in the same epoch. */
  gaps: number;
}

interface Position {
  epoch: string;
  seq: number;
}

type Message = {
  type: string;
  channel?: string;
  market?: string;
  depth?: number | null;
} & Partial<Position> & {
    recovered?: Record<string, boolean>;
  };

export class ResumingClient {
  readonly counts: ResumeCounts = { resumes: 0, recovered: 0, snapshotsResent: 0, gaps: 0 };
  readonly #selections: readonly Selection[];
  readonly #positions = new Map<string, Position>();
  #socket: WebSocket | undefined;
  #moves = 0;
  #answers = 0;

  constructor(selections: readonly Selection[]) {
    this.#selections = selections;
  }

  /** Every stream has its first snapshot. */
  get ready(): boolean {
    return this.#positions.size === this.#selections.reduce((sum, { markets }) => sum + markets.length, 0);
  }

  /** Connects to `url` and subscribes, resuming every stream it had (after the first connection). */
  async connect(url: string): Promise<void> {
    const socket = new WebSocket(`${url.replace(/^http/, 'ws')}/v1/ws`);
    this.#socket = socket;
    socket.on('message', (data) => this.#record(JSON.parse(data.toString()) as Message));
    socket.on('error', () => {
      // A relay going away: the scenario moves the client.
    });
    await once(socket, 'open');
    const resuming = this.#positions.size > 0;
    if (resuming) this.#moves += 1;
    this.#answers = 0;
    for (const selection of this.#selections) {
      const resume = resuming
        ? Object.fromEntries(
            selection.markets.map((market) => [
              market,
              this.#positions.get(keyOf(selection.channel, market, selection.depth)),
            ]),
          )
        : undefined;
      socket.send(
        JSON.stringify({ op: 'subscribe', ...selection, ...(resume === undefined ? {} : { resume }) }),
      );
    }
  }

  /** Every subscribe of the last connection was answered. */
  get subscribed(): boolean {
    return this.#answers === this.#selections.length;
  }

  get closed(): boolean {
    return this.#socket === undefined || this.#socket.readyState >= WebSocket.CLOSING;
  }

  close(): void {
    this.#socket?.terminate();
  }

  #record(message: Message): void {
    if (message.type === 'subscribed') {
      this.#answers += 1;
      for (const recovered of Object.values(message.recovered ?? {})) {
        this.counts.resumes += 1;
        if (recovered) this.counts.recovered += 1;
      }
      return;
    }
    if ((message.type !== 'snapshot' && message.type !== 'update') || message.epoch === undefined) return;
    const key = keyOf(message.channel ?? '', message.market ?? '', message.depth);
    const position = { epoch: message.epoch, seq: message.seq ?? 0 };
    const last = this.#positions.get(key);
    if (message.type === 'snapshot') {
      if (this.#moves > 0) this.counts.snapshotsResent += 1;
    } else if (last === undefined || last.epoch !== position.epoch || last.seq + 1 !== position.seq) {
      this.counts.gaps += 1;
    }
    this.#positions.set(key, position);
  }
}

function keyOf(channel: string, market: string, depth: number | null | undefined): string {
  return channel === 'book' ? `book:${market}:${depth ?? 'full'}` : `${channel}:${market}`;
}

export function sumCounts(clients: readonly ResumingClient[]): ResumeCounts {
  const total: ResumeCounts = { resumes: 0, recovered: 0, snapshotsResent: 0, gaps: 0 };
  for (const { counts } of clients) {
    total.resumes += counts.resumes;
    total.recovered += counts.recovered;
    total.snapshotsResent += counts.snapshotsResent;
    total.gaps += counts.gaps;
  }
  return total;
}
