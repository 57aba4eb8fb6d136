/**
 * `replay` (docs/protocol.md "Replay"): what a live client received of a book comes back through
 * replay at "max" and at speed 2 as the very same messages (every field, checksums included), each
 * with `"replay": <id>`, ended by `replayed` with the count; two markets come merged in `rts` order,
 * each marked with a `replay_gap` from the range's start to the snapshot its stream started with;
 * and the replay moves nothing of the connection's live positions (`list`). A replay from inside a
 * running stream starts it with the book the live client held at `from` (the position, times and
 * checksum of the last message before it), then the messages after it as sent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyBookUpdate, type BookState } from '../../../packages/protocol/src/protocol/book.ts';
import type { Relay } from '../../../src/relay-server.ts';
import { type SimulatorHandle, startSimulator } from '../../../src/sim/server.ts';
import { recordingFolder, startRecordingRelay, TextClient } from '../../support/replay-client.ts';
import { waitFor } from '../../support/wait-for.ts';

let sim: SimulatorHandle;
let relay: Relay;
const folder = recordingFolder('replay-');
const clients: TextClient[] = [];

beforeAll(async () => {
  sim = await startSimulator({ markets: 3, seed: 47, tickMs: 20 });
  relay = await startRecordingRelay(sim, folder.dataDir);
});
afterAll(async () => {
  for (const client of clients) client.close();
  await relay?.close();
  await sim?.close();
  folder.remove();
});

async function client(): Promise<TextClient> {
  const opened = await TextClient.connect(relay);
  clients.push(opened);
  return opened;
}

/** The message without its `replay` field, as text: what was sent live. */
function withoutReplay(text: string): string {
  const { replay: _id, ...message } = JSON.parse(text) as Record<string, unknown>;
  return JSON.stringify(message);
}

describe('replay of a recorded book', () => {
  it('gives back what the live client received, at "max" and at speed 2, and leaves list alone', async () => {
    const [market, other] = sim.market.activeMarketIds();
    const from = new Date(Date.now() - 1).toISOString();
    const live = await client();
    live.send({ op: 'subscribe', id: 'live', channel: 'book', markets: [market, other] });
    await waitFor('a changing book', () => live.stream().length >= 30);
    // Up to the last message received of each market: none of the range is still on its way.
    const lastRts = (m: string) =>
      Date.parse(live.stream().findLast(({ message }) => message.market === m)!.message.rts as string);
    const to = new Date(Math.min(lastRts(market!), lastRts(other!)) + 1).toISOString();
    const sent = live
      .stream()
      .filter(({ message }) => (message.rts as string) < to)
      .map(({ text }) => text);
    live.send({ op: 'list', id: 'before' });
    const before = await live.answer('subscriptions', 'before');

    for (const [id, speed] of [
      ['fast', 'max'],
      [2, 2],
    ] as const) {
      live.send({ op: 'replay', id, channel: 'book', markets: [market, other], from, to, speed });
      const done = await live.answer('replayed', id);
      const replayed = live.stream(id);
      expect(done).toEqual({ type: 'replayed', id, messages: replayed.length });
      // Each is the live text with the replay's id added, nothing else changed, in rts order.
      expect(replayed.map(({ text }) => withoutReplay(text))).toEqual(
        [...sent].sort((a, b) => rtsOf(a) - rtsOf(b)).map(withoutReplay),
      );
      const rts = replayed.map(({ message }) => Date.parse(message.rts as string));
      expect(rts).toEqual([...rts].sort((a, b) => a - b));
      // Paced: at speed 2 the replay is spread over half the recorded span (some 150 ms, long beside a
      // loaded machine's scheduling delays); half of that is the bound, as the first message may
      // reach a loaded client late and the last one on time.
      if (speed === 2)
        expect(replayed.at(-1)!.at - replayed[0]!.at).toBeGreaterThanOrEqual((rts.at(-1)! - rts[0]!) / 4);
      expect(new Set(replayed.map(({ message }) => message.market))).toEqual(new Set([market, other]));
      // Nothing of either stream was held before its first snapshot: that stretch is marked.
      const firstRts = (m: string) => replayed.find(({ message }) => message.market === m)?.message.rts;
      expect(live.of('replay_gap', id).map(({ message }) => message)).toEqual(
        expect.arrayContaining(
          [market, other].map((m) => ({
            type: 'replay_gap',
            id,
            channel: 'book',
            market: m,
            from,
            to: firstRts(m!),
          })),
        ),
      );
      expect(live.of('replay_gap', id)).toHaveLength(2);
    }

    // The live positions `list` shows moved only with the live stream, never back to a replayed one.
    live.send({ op: 'list', id: 'after' });
    const after = await live.answer('subscriptions', 'after');
    const lastLive = (m: string) =>
      live
        .stream()
        .filter(({ message }) => message.market === m)
        .at(-1)?.message;
    for (const entry of after.subscriptions as { market: string; seq: number; epoch: string }[]) {
      expect(entry.seq).toBeGreaterThanOrEqual(
        (before.subscriptions as { market: string; seq: number }[]).find((b) => b.market === entry.market)!
          .seq,
      );
      expect(entry.epoch).toBe(lastLive(entry.market)?.epoch);
    }
  });
});

describe('replay from inside a running stream', () => {
  it('starts each stream with its state at from, then the messages after it as sent', async () => {
    const [, , market] = sim.market.activeMarketIds();
    const live = await client();
    live.send({ op: 'subscribe', id: 'live-mid', channel: 'book', markets: [market] });
    await waitFor('a changing book', () => live.stream().length >= 40);
    const sent = live.stream().map(({ message }) => message as unknown as LiveBook);
    // `from` falls strictly between two live messages, well inside the stream.
    const at = sent.findIndex(
      (message, i) =>
        i >= 10 && i + 1 < sent.length && Date.parse(sent[i + 1]!.rts) > Date.parse(message.rts) + 1,
    );
    expect(at).toBeGreaterThanOrEqual(10);
    const from = new Date(Date.parse(sent[at]!.rts) + 1).toISOString();
    const to = new Date(Date.parse(sent.at(-1)!.rts) + 1).toISOString();
    // What the live client held after each message.
    let book: BookState = { bids: [], asks: [] };
    const held = sent.map((message) => {
      book = message.type === 'snapshot' ? message.data : applyBookUpdate(book, message.data);
      return book;
    });

    for (const [id, speed] of [
      ['mid-max', 'max'],
      ['mid-10', 10],
    ] as const) {
      live.send({ op: 'replay', id, channel: 'book', markets: [market], from, to, speed });
      await live.answer('replayed', id);
      const [first, ...rest] = live.stream(id).map(({ message }) => message as unknown as LiveBook);
      const { data, ...envelope } = sent[at]!;
      expect(first).toMatchObject({ ...envelope, type: 'snapshot', replay: id });
      expect(first!.data).toEqual(held[at]);
      expect(rest.map(({ replay: _id, ...message }) => message)).toEqual(sent.slice(at + 1));
      expect(live.of('replay_gap', id)).toEqual([]);
    }
  });
});

interface LiveBook {
  type: 'snapshot' | 'update';
  seq: number;
  rts: string;
  data: BookState;
  replay?: unknown;
}

function rtsOf(text: string): number {
  return Date.parse((JSON.parse(text) as { rts: string }).rts);
}
