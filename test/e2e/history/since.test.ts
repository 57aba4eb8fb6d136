/**
 * `since` a time answered from the relay's record (docs/protocol.md "History and replay"), on a
 * relay recording into a temporary folder, its book, price and trades streams changing every few
 * milliseconds while the record is read: the first message is the state as it stood at the time
 * (the live client's state after its last message at or before it: same seq, epoch, data and
 * checksum), then every message the live client was sent after it, the same, in order, then live,
 * with no gap and no duplicate at the seam; the same over SSE. A `since` before the record's start
 * says `complete: false` from where it starts, also on candles whose source upstream keeps no
 * history of; `list` shows the `since`; a bad `since` is refused with the request's id.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type Message, MessageRecorder } from '../../support/clients/message-recorder.ts';
import { ProtocolClient } from '../../support/clients/protocol-client.ts';
import { SseClient } from '../../support/clients/sse-client.ts';
import { type Harness, useHarness } from '../../support/harness.ts';
import { waitFor } from '../../support/wait-for.ts';

const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

const HOUR = 3_600_000;

/** Feeds messages to the recorder's own state keeping: a client's state at any seq. */
class Replayer extends MessageRecorder {
  feed(message: Message): void {
    this.record(message);
  }
}

const streamMessages = (client: MessageRecorder, channel: string) =>
  client.messages.filter(
    (message) => (message.type === 'snapshot' || message.type === 'update') && message.channel === channel,
  );

/** The live client's messages of `channel`: the state after each, and whether it was sent at or before `at`. */
function stateAt(live: Message[], seq: number): unknown {
  const replayer = new Replayer();
  for (const message of live) {
    replayer.feed(message);
    if (message.seq === seq) break;
  }
  return [...replayer.streams.values()][0]?.state;
}

/**
 * What `answer` (a `since` subscriber's messages of one stream) must be against `live`'s: a
 * snapshot at the last live message at or before `since`, with that state (and checksum), then
 * every live message after it as it was sent.
 */
function expectStitched(answer: Message[], live: Message[], since: number): void {
  const [first, ...rest] = answer;
  const before = live.filter((message) => Date.parse(message.rts as string) <= since);
  const at = before.at(-1)!;
  expect(first).toMatchObject({ type: 'snapshot', epoch: at.epoch, seq: at.seq, ts: at.ts, rts: at.rts });
  if (at.checksum !== undefined) expect(first?.checksum).toBe(at.checksum);
  expect(first?.data).toEqual(stateAt(live, at.seq as number));
  // Either client may be a message or two ahead of the other: what both received is the same.
  const after = live.slice(before.length, before.length + rest.length);
  expect(after.length).toBeGreaterThan(0);
  expect(rest.slice(0, after.length)).toEqual(after);
}

describe('since a time, from the record', () => {
  const { opened, start } = useHarness();

  async function recordingHarness(): Promise<Harness> {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'history-since-'));
    folders.push(dataDir);
    return start({
      sim: { markets: 3, seed: 11, tickMs: 10 },
      relay: { history: { store: 'embedded', dataDir, retentionMs: HOUR, maxBytes: 1024 ** 3 } },
    });
  }

  async function connect(harness: Harness): Promise<ProtocolClient> {
    const client = await ProtocolClient.connect(harness.relay.url);
    opened.push(client);
    return client;
  }

  it('book (full and at a depth), price and trades: the state at the time, every recorded message after it, then live, no gap, no duplicate', async () => {
    const harness = await recordingHarness();
    const [market] = harness.sim.market.activeMarketIds() as [string];
    const live = await connect(harness);
    const streams = [
      { channel: 'book', depth: null },
      { channel: 'book', depth: 10 },
      { channel: 'price' },
      { channel: 'trades' },
    ] as const;
    const messagesOf = (client: MessageRecorder, stream: (typeof streams)[number]) =>
      streamMessages(client, stream.channel).filter(
        (message) => message.depth === ('depth' in stream ? stream.depth : undefined),
      );
    const seqOf = (client: MessageRecorder, stream: (typeof streams)[number]) =>
      client.view(stream.channel, market, 'depth' in stream ? stream.depth : undefined)?.seq ?? 0;
    for (const stream of streams) await live.request({ op: 'subscribe', markets: [market], ...stream });
    await waitFor('changing books and price', () =>
      streams.every((stream) => messagesOf(live, stream).length >= (stream.channel === 'trades' ? 2 : 20)),
    );
    // A time amid what the live client received: the state then is a book already changed many times.
    const book = messagesOf(live, streams[0]);
    const since = Date.parse(book[Math.floor(book.length / 2)]!.rts as string) + 1;
    const sinceText = new Date(since).toISOString();

    const late = await connect(harness);
    for (const stream of streams) {
      const answer = await late.request({ op: 'subscribe', markets: [market], ...stream, since: sinceText });
      expect(answer).toMatchObject({
        type: 'subscribed',
        since: sinceText,
        history: { from: sinceText, complete: true },
      });
    }
    // The streams go on changing; the late client catches up with the live one and goes on with it.
    const caughtUp = streams.map((stream) => seqOf(live, stream) + 5);
    await waitFor('the late client live again', () =>
      streams.every((stream, i) => seqOf(late, stream) >= caughtUp[i]!),
    );
    for (const stream of streams) expectStitched(messagesOf(late, stream), messagesOf(live, stream), since);
    expect(late.violations).toEqual([]);
    const listed = await late.request({ op: 'list' });
    expect(listed.subscriptions).toEqual(
      expect.arrayContaining(
        streams.map(({ channel }) => expect.objectContaining({ channel, since: sinceText })),
      ),
    );
  });

  it('over SSE alike; before the record starts: complete: false from its first snapshot', async () => {
    const harness = await recordingHarness();
    const [market] = harness.sim.market.activeMarketIds() as [string];
    const live = await connect(harness);
    await live.request({ op: 'subscribe', channel: 'book', markets: [market] });
    await waitFor('a changing book', () => streamMessages(live, 'book').length >= 20);
    const book = streamMessages(live, 'book');
    const since = Date.parse(book[Math.floor(book.length / 2)]!.rts as string) + 1;
    const sse = await SseClient.connect(
      `${harness.relay.url}/v1/sse?channel=book&markets=${market}&since=${encodeURIComponent(new Date(since).toISOString())}`,
    );
    opened.push(sse);
    const target = live.view('book', market, null)!.seq + 5;
    await waitFor('the SSE client live again', () => (sse.view('book', market, null)?.seq ?? 0) >= target);
    expectStitched(streamMessages(sse, 'book'), streamMessages(live, 'book'), since);
    expect(sse.violations).toEqual([]);

    // An hour back: the record of this book starts with the live client's first snapshot.
    const early = await connect(harness);
    const hourBack = new Date(Date.now() - HOUR + 60_000).toISOString();
    const answer = await early.request({
      op: 'subscribe',
      channel: 'book',
      markets: [market],
      since: hourBack,
    });
    const first = book[0]!;
    expect(answer.history).toEqual({ from: first.rts, complete: false });
    await waitFor(
      'the early client live again',
      () => (early.view('book', market, null)?.seq ?? 0) >= target,
    );
    const received = streamMessages(early, 'book');
    expect(received.slice(0, book.length)).toEqual(book);
    expect(early.violations).toEqual([]);
  });

  it('takes since on candles of a source upstream keeps no history of, from the record alone', async () => {
    const harness = await recordingHarness();
    const [market] = harness.sim.market.activeMarketIds() as [string];
    const client = await connect(harness);
    const stream = `${market}:1m:probability`;
    const since = new Date(Date.now() - 10 * 60_000).toISOString();
    const answer = await client.request({ op: 'subscribe', channel: 'candles', markets: [stream], since });
    // Nothing of this stream was recorded ten minutes ago: the answer is the live stream, and says so.
    expect(answer).toMatchObject({ type: 'subscribed', since, history: { complete: false } });
    expect(Date.parse((answer.history as { from: string }).from)).toBeGreaterThan(Date.parse(since));
    await waitFor('the candles snapshot', () => streamMessages(client, 'candles').length > 0);
    expect(streamMessages(client, 'candles')[0]?.type).toBe('snapshot');
    expect(client.violations).toEqual([]);
  });

  it('refuses a since not ISO, in the future or past the retention with the id, and changes nothing', async () => {
    const harness = await recordingHarness();
    const [market] = harness.sim.market.activeMarketIds() as [string];
    const client = await connect(harness);
    const bad = [
      'yesterday',
      '2026-13-01T00:00:00Z',
      new Date(Date.now() + 60_000).toISOString(),
      new Date(Date.now() - 2 * HOUR).toISOString(),
    ];
    for (const since of bad) {
      const answer = await client.request({ op: 'subscribe', channel: 'book', markets: [market], since });
      expect(answer, since).toMatchObject({ type: 'error', code: 'bad_request' });
      expect(String(answer.message), since).toMatch(
        /"since": .*(not an ISO 8601 time|in the future|past the record's retention)/,
      );
    }
    expect((await client.request({ op: 'list' })).subscriptions).toEqual([]);
  });
});
