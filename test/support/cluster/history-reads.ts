/**
 * @module test/support/cluster/history-reads
 * Reading a relay's record beside what its clients received, for the shared history tests and the
 * history-outage benchmark (no test runner here): a client that keeps the raw text of each book
 * message, the record as a relay exports it and as it replays it (with its `replay_gap`s),
 * `/health`'s history part and `/metrics`' samples, the runs of consecutive seq of a record (one
 * run: no gap), and what a client received live that a replay left out without saying so.
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

/** The value of the relay's `/metrics` sample `market_relay_<name>` (one without labels); undefined when absent. */
export async function metric(relay: ChildRelay, name: string): Promise<number | undefined> {
  const text = await (await fetch(`${relay.url}/metrics`)).text();
  const sample = new RegExp(`^market_relay_${name} (\\S+)$`, 'm').exec(text);
  return sample === null ? undefined : Number(sample[1]);
}

export interface ReplayGap {
  from: string;
  to: string;
  reason?: string;
}

/**
 * One book replayed at `"max"` on `relay` over [from, to): its messages, each as sent live (the text
 * without the replay's `replay` field), and its `replay_gap`s.
 */
export async function replayBook(
  relay: ChildRelay,
  market: string,
  from: string,
  to: string,
): Promise<{ messages: Received[]; gaps: ReplayGap[] }> {
  const socket = new WebSocket(`${relay.url.replace('http', 'ws')}/v1/ws`, { perMessageDeflate: false });
  socket.on('error', () => undefined);
  const messages: Received[] = [];
  const gaps: ReplayGap[] = [];
  try {
    await new Promise((resolve) => socket.once('open', resolve));
    const ended = new Promise<void>((resolve, reject) => {
      const deadline = setTimeout(() => reject(new Error('no `replayed` within 15 s')), 15_000);
      socket.on('message', (data) => {
        const { replay, ...message } = JSON.parse(data.toString()) as Record<string, unknown>;
        const answers = replay === 'outage' || message.id === 'outage';
        if (!answers) return;
        if (message.type === 'snapshot' || message.type === 'update')
          messages.push({
            text: JSON.stringify(message),
            epoch: String(message.epoch),
            seq: Number(message.seq),
          });
        else if (message.type === 'replay_gap')
          gaps.push({
            from: String(message.from),
            to: String(message.to),
            ...(typeof message.reason === 'string' ? { reason: message.reason } : {}),
          });
        else if (message.type === 'replayed' || message.type === 'error') {
          clearTimeout(deadline);
          if (message.type === 'replayed') resolve();
          else reject(new Error(`the replay answered ${JSON.stringify(message)}`));
        }
      });
    });
    socket.send(
      JSON.stringify({
        op: 'replay',
        id: 'outage',
        channel: 'book',
        markets: [market],
        from,
        to,
        speed: 'max',
      }),
    );
    await ended;
  } finally {
    socket.terminate();
  }
  return { messages, gaps };
}

const rtsOf = (message: Received) => Date.parse((JSON.parse(message.text) as { rts: string }).rts);

/**
 * The messages received live, within the replay's span, that the replay neither sent nor covers by
 * a `replay_gap` (`from` to `to` by `rts`): holes in the record nobody was told of. None is expected.
 */
export function silentlyMissing(
  live: readonly Received[],
  replay: { messages: readonly Received[]; gaps: readonly ReplayGap[] },
): Received[] {
  const sent = new Set(replay.messages.map((message) => `${message.epoch}/${message.seq}`));
  const first = replay.messages[0];
  const last = replay.messages.at(-1);
  if (first === undefined || last === undefined) return [...live];
  const [from, to] = [rtsOf(first), rtsOf(last)];
  const marked = replay.gaps.map((gap) => [Date.parse(gap.from), Date.parse(gap.to)] as const);
  return live.filter((message) => {
    const rts = rtsOf(message);
    if (rts < from || rts > to || sent.has(`${message.epoch}/${message.seq}`)) return false;
    return !marked.some(([start, end]) => start <= rts && rts <= end);
  });
}
