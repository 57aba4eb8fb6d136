/**
 * `relay.replay(...)` against a scripted relay speaking the wire of docs/protocol.md "History and
 * replay": the request as sent, each replayed message applied to its market's book with its
 * checksum verified (the state readable at each step), a `replay_gap` as an item, the end at
 * `replayed`, a bad checksum caught as a `resync` item, `replay_stop` on leaving the loop, a
 * refusal thrown from the loop, live streams untouched, and bad options refused before sending.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { connect, type RelayClient } from '../../../packages/client/src/node.ts';
import {
  applyBookUpdate,
  type BookState,
  bookChecksum,
} from '../../../packages/protocol/src/protocol/book.ts';
import type { ReplayRequest } from '../../../packages/protocol/src/protocol/history.ts';
import type { BookData } from '../../../packages/protocol/src/protocol/messages.ts';
import { waitFor } from '../../support/wait-for.ts';
import { FakeRelay, stamp } from '../fake-relay.ts';

const market = '3f2b8c1e-5d4a-4e6b-9c7d-1a2b3c4d5e6f';
const other = '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';
const first: BookState = {
  bids: [
    ['0.52000000', '150'],
    ['0.51000000', '20.5'],
  ],
  asks: [['0.53000000', '75.25']],
  last_price: '0.52000000',
};
const changes: BookData[] = [
  { bids: [['0.52000000', '140']], asks: [] },
  { bids: [], asks: [['0.54000000', '10']] },
  { bids: [['0.51000000', '0']], asks: [], last_price: '0.53000000' },
];

/** The book after each message: first, then each change applied in turn. */
const states: BookState[] = [first];
for (const change of changes) states.push(applyBookUpdate(states.at(-1)!, change));

function bookMessages(replay: string, name = market) {
  const envelope = { channel: 'book', market: name, depth: null, epoch: 'e1', ...stamp, replay };
  return [
    { type: 'snapshot', ...envelope, seq: 10, data: first, checksum: bookChecksum(first) },
    ...changes.map((data, index) => ({
      type: 'update',
      ...envelope,
      seq: 11 + index,
      data,
      checksum: bookChecksum(states[index + 1]!),
    })),
  ];
}

describe('relay.replay()', () => {
  let relay: FakeRelay;
  let client: RelayClient;

  beforeEach(async () => {
    relay = await FakeRelay.start();
    client = connect(relay.url, { encoding: 'json' });
  });
  afterEach(async () => {
    await client.close();
    await relay.close();
  });

  async function replayRequest(n = 0): Promise<ReplayRequest> {
    const requests = await waitFor(`replay request #${n}`, () => {
      const replays = relay.replayRequests.filter((request) => request.op === 'replay');
      return replays.length > n ? replays : undefined;
    });
    return requests[n] as ReplayRequest;
  }

  it('yields each message with the book after it, a gap as an item, and ends at replayed', async () => {
    const replay = client.replay({
      channel: 'book',
      markets: [market],
      from: '2026-03-02T14:00:00Z',
      to: new Date('2026-03-02T15:00:00Z'),
      speed: 'max',
    });
    const request = await replayRequest();
    expect(request).toEqual({
      op: 'replay',
      id: replay.id,
      channel: 'book',
      markets: [market],
      from: '2026-03-02T14:00:00Z',
      to: '2026-03-02T15:00:00.000Z',
      speed: 'max',
      depth: null,
    });
    const [snapshot, ...updates] = bookMessages(String(replay.id));
    relay.send(snapshot!);
    relay.send(updates[0]!);
    relay.send({
      type: 'replay_gap',
      id: replay.id,
      channel: 'book',
      market,
      from: '2026-03-02T14:10:00Z',
      to: '2026-03-02T14:12:00Z',
      reason: 'relay_down',
    });
    for (const update of updates.slice(1)) relay.send(update);
    relay.send({ type: 'replayed', id: replay.id, messages: 4 });

    const seen: string[] = [];
    const books: BookState[] = [];
    for await (const item of replay) {
      if (item.type === 'message') {
        seen.push(`${item.message.type} ${item.message.seq}`);
        books.push(item.state);
        expect(item.stream.seq).toBe(item.message.seq);
        expect(bookChecksum(item.state)).toBe(item.message.checksum);
      } else seen.push(item.type);
    }
    expect(seen).toEqual(['snapshot 10', 'update 11', 'gap', 'update 12', 'update 13']);
    expect(books).toEqual(states);
    expect(replay.result).toEqual({ type: 'replayed', id: replay.id, messages: 4 });
    // It ended at `replayed`: nothing to stop.
    expect(relay.replayRequests.filter((request) => request.op === 'replay_stop')).toEqual([]);
  });

  it('catches a bad checksum as a resync item and keeps the last verified book until the next snapshot', async () => {
    const replay = client.replay({ channel: 'book', markets: [market], from: '2026-03-02T14:00:00Z' });
    await replayRequest();
    const [snapshot, good, bad, after] = bookMessages(String(replay.id));
    relay.send(snapshot!);
    relay.send(good!);
    relay.send({ ...bad!, checksum: (bad!.checksum + 1) % 2 ** 32 });
    relay.send(after!);
    relay.send({ ...snapshot!, seq: 20 });
    relay.send({ type: 'replayed', id: replay.id, messages: 5 });

    const items: string[] = [];
    let lastVerified: BookState | undefined;
    for await (const item of replay) {
      if (item.type === 'message') {
        items.push(`${item.message.type} ${item.message.seq}`);
        lastVerified = item.state;
      } else if (item.type === 'resync') {
        items.push(`resync ${item.reason}`);
        expect(item.market).toBe(market);
        expect(lastVerified).toEqual(states[1]);
      }
    }
    // The update after the bad one cannot be placed: skipped until the record's next snapshot.
    expect(items).toEqual(['snapshot 10', 'update 11', 'resync checksum', 'snapshot 20']);
  });

  it("keeps another channel's state as its live stream does (price)", async () => {
    const replay = client.replay({
      channel: 'price',
      markets: [market],
      from: '2026-03-02T14:00:00Z',
      speed: 10,
    });
    expect((await replayRequest()).speed).toBe(10);
    const envelope = { channel: 'price', market, epoch: 'e1', ...stamp, replay: replay.id };
    relay.send({
      type: 'snapshot',
      ...envelope,
      seq: 1,
      data: { best_bid: '0.52000000', best_ask: '0.53000000' },
    });
    relay.send({ type: 'update', ...envelope, seq: 2, data: { best_bid: '0.52500000' } });
    relay.send({ type: 'replayed', id: replay.id, messages: 2 });
    const states: unknown[] = [];
    for await (const item of replay) if (item.type === 'message') states.push(item.state);
    expect(states).toEqual([
      { best_bid: '0.52000000', best_ask: '0.53000000' },
      { best_bid: '0.52500000', best_ask: '0.53000000' },
    ]);
  });

  it('reads a long replay, all of it queued before the loop starts, in order', async () => {
    const live = client.subscribeBook(market);
    await relay.subscribe('book');
    const replay = client.replay({ channel: 'price', markets: [market], from: '2026-03-02T14:00:00Z' });
    await replayRequest();
    const envelope = { channel: 'price', market, epoch: 'e1', ...stamp, replay: replay.id };
    const count = 3_000;
    relay.send({ type: 'snapshot', ...envelope, seq: 1, data: { last_price: '0.00000001' } });
    for (let seq = 2; seq <= count; seq++)
      relay.send({
        type: 'update',
        ...envelope,
        seq,
        data: { last_price: `0.${String(seq).padStart(8, '0')}` },
      });
    relay.send({ type: 'replayed', id: replay.id, messages: count });
    // Frames are read in order: once this live snapshot is in, the whole replay waits in the queue.
    relay.send({ ...bookMessages('')[0]!, replay: undefined, seq: 7 });
    await waitFor('the replay to be queued', () => live.seq === 7);
    const seqs: number[] = [];
    let last: unknown;
    for await (const item of replay)
      if (item.type === 'message') {
        seqs.push(item.message.seq);
        last = item.state;
      }
    expect(seqs).toEqual(Array.from({ length: count }, (_, index) => index + 1));
    expect(last).toEqual({ last_price: `0.${String(count).padStart(8, '0')}` });
  });

  it('keeps each market in its own book', async () => {
    const replay = client.replay({ channel: 'book', markets: [market, other], from: '2026-03-02T14:00:00Z' });
    await replayRequest();
    const mine = bookMessages(String(replay.id));
    const theirs = bookMessages(String(replay.id), other);
    relay.send(mine[0]!);
    relay.send(theirs[0]!);
    relay.send(mine[1]!);
    relay.send(theirs[1]!);
    relay.send({ type: 'replayed', id: replay.id, messages: 4 });
    const books: [string, BookState][] = [];
    for await (const item of replay) if (item.type === 'message') books.push([item.market, item.state]);
    expect(books).toEqual([
      [market, states[0]],
      [other, states[0]],
      [market, states[1]],
      [other, states[1]],
    ]);
  });

  it('sends replay_stop when the loop is left early, and drops what was still on its way', async () => {
    const replay = client.replay({ channel: 'book', markets: [market], from: '2026-03-02T14:00:00Z' });
    await replayRequest();
    const messages = bookMessages(String(replay.id));
    for (const message of messages) relay.send(message);
    for await (const item of replay) {
      expect(item.type).toBe('message');
      break;
    }
    await waitFor('replay_stop', () => relay.replayRequests.find((request) => request.op === 'replay_stop'));
    expect(relay.replayRequests.at(-1)).toEqual({ op: 'replay_stop', id: replay.id });
    // The relay's closing word after a stop reaches nothing, and a later replay is its own.
    relay.send({ type: 'replayed', id: replay.id, messages: 1, stopped: true });
    const next = client.replay({ channel: 'book', markets: [market], from: '2026-03-02T14:00:00Z' });
    expect(next.id).not.toBe(replay.id);
    await replayRequest(1);
    relay.send({ type: 'replayed', id: next.id, messages: 0 });
    const items: unknown[] = [];
    for await (const item of next) items.push(item);
    expect(items).toEqual([]);
  });

  it("throws the relay's refusal from the loop, with the replay's id", async () => {
    const replay = client.replay({ channel: 'book', markets: [market], from: '2026-03-02T14:00:00Z' });
    await replayRequest();
    relay.send({
      type: 'error',
      id: replay.id,
      code: 'limit_exceeded',
      message: 'at most 2 replays a connection',
    });
    await expect(async () => {
      for await (const _item of replay) {
        // nothing comes
      }
    }).rejects.toMatchObject({ code: 'limit_exceeded', requestId: replay.id });
  });

  it('throws connection_failed from the loop when the connection closes during the replay', async () => {
    const replay = client.replay({ channel: 'book', markets: [market], from: '2026-03-02T14:00:00Z' });
    await replayRequest();
    relay.send(bookMessages(String(replay.id))[0]!);
    relay.dropConnections();
    const items: string[] = [];
    await expect(async () => {
      for await (const item of replay) items.push(item.type);
    }).rejects.toMatchObject({ code: 'connection_failed' });
    // What arrived before the close is still read.
    expect(items).toEqual(['message']);
  });

  it('leaves a live stream of the same book alone', async () => {
    const live = client.subscribeBook(market);
    await relay.subscribe('book');
    const replay = client.replay({ channel: 'book', markets: [market], from: '2026-03-02T14:00:00Z' });
    await replayRequest();
    relay.send({ ...bookMessages(String(replay.id))[0]!, replay: undefined, seq: 500 });
    await waitFor('the live snapshot', () => live.seq === 500);
    for (const message of bookMessages(String(replay.id))) relay.send(message);
    relay.send({ type: 'replayed', id: replay.id, messages: 4 });
    let replayed = 0;
    for await (const item of replay) if (item.type === 'message') replayed += 1;
    expect(replayed).toBe(4);
    expect(live.seq).toBe(500);
    expect(live.state).toEqual(first);
  });

  it('ends a replay asked of a closed client at once', async () => {
    await client.close();
    const replay = client.replay({ channel: 'book', markets: [market], from: '2026-03-02T14:00:00Z' });
    await expect(replay[Symbol.asyncIterator]().next()).rejects.toMatchObject({ code: 'connection_failed' });
  });

  it('refuses bad options before sending anything', () => {
    const from = '2026-03-02T14:00:00Z';
    for (const options of [
      { channel: 'book' as const, markets: [market], from: '2026-03-02 14:00' },
      { channel: 'book' as const, markets: [market], from, to: from },
      { channel: 'book' as const, markets: [market], from, to: '2026-03-02T13:00:00Z' },
      { channel: 'book' as const, markets: [market], from, speed: 0 },
      { channel: 'book' as const, markets: [market], from, speed: -1 },
      { channel: 'book' as const, markets: [market], from, speed: 'fast' as unknown as number },
      { channel: 'book' as const, markets: [], from },
      { channel: 'book' as const, markets: ['not-a-uuid'], from },
      { channel: 'price' as const, markets: [market], from, depth: 10 as const },
    ])
      expect(() => client.replay(options), JSON.stringify(options)).toThrow(TypeError);
    expect(relay.replayRequests).toEqual([]);
  });
});
