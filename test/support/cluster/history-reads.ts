/**
 * @module test/support/cluster/history-reads
 * Reading a relay's record beside what its clients received, for the shared history tests and the
 * history-outage benchmark (no test runner here): a client that keeps the raw text of each book
 * message, the record as a relay exports it, `/health`'s history part, and the runs of consecutive
 * seq of a record (one run: no gap).
 */
import WebSocket from 'ws';
import type { ChildRelay } from './child-relay.ts';

export interface Received {
  text: string;
  epoch: string;
  seq: number;
}

/** Subscribes to one full book and keeps the raw text of every snapshot and update. */
export async function liveBook(relay: ChildRelay, market: string) {
  const socket = new WebSocket(`${relay.url.replace('http', 'ws')}/v1/ws`, { perMessageDeflate: false });
  const received: Received[] = [];
  socket.on('message', (data) => {
    const text = data.toString();
    const message = JSON.parse(text) as { type: string; epoch: string; seq: number };
    if (message.type === 'snapshot' || message.type === 'update')
      received.push({ text, epoch: message.epoch, seq: message.seq });
  });
  socket.on('error', () => undefined); // a killed relay's socket
  await new Promise((resolve) => socket.once('open', resolve));
  socket.send(JSON.stringify({ op: 'subscribe', channel: 'book', markets: [market] }));
  return { received, close: () => socket.terminate() };
}

/** The book's record as `relay` exports it (NDJSON, every line a message as sent). */
export async function recorded(relay: ChildRelay, market: string, from: number): Promise<Received[]> {
  const query = `market=${market}&from=${new Date(from).toISOString()}`;
  const response = await fetch(`${relay.url}/v1/history/book?${query}`);
  if (response.status !== 200) throw new Error(`export answered ${response.status}`);
  return (await response.text())
    .split('\n')
    .filter((line) => line !== '')
    .map((text) => {
      const message = JSON.parse(text) as { epoch: string; seq: number };
      return { text, epoch: message.epoch, seq: message.seq };
    });
}

export async function health(
  relay: ChildRelay,
): Promise<{ history: { reachable: boolean; writing: boolean } }> {
  return (await (await fetch(`${relay.url}/health`)).json()) as {
    history: { reachable: boolean; writing: boolean };
  };
}

/** The runs of consecutive seq in `records` of one epoch: one run = no gap. */
export function runs(records: readonly Received[]): [number, number][] {
  const seqs = [...new Set(records.map((record) => record.seq))].sort((a, b) => a - b);
  const found: [number, number][] = [];
  for (const seq of seqs) {
    const last = found.at(-1);
    if (last !== undefined && last[1] === seq - 1) last[1] = seq;
    else found.push([seq, seq]);
  }
  return found;
}
