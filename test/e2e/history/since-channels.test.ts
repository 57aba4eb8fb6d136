/**
 * `since` a time on every channel since.test.ts leaves out (docs/protocol.md "History and replay"):
 * market, markets, rest, oracle, probabilities, orders, candles of both sources, a grouped book, and
 * a compact connection. A live client subscribes first; the record takes the streams' changes; a
 * second client asks each stream `since` a time amid them while the streams go on changing. Its first
 * message is the state the live client held at that time (its own apply: the channel's update
 * functions, JSON Patch, checksums), then every message the live client was sent after it, the same,
 * in order, then live: no gap, no duplicate at the seam. A `since` before the record starts says
 * `complete: false` from the stream's first recorded message.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { COMPACT_SUBPROTOCOL } from '../../../packages/protocol/src/protocol/compact.ts';
import { type Message, MessageRecorder } from '../../support/clients/message-recorder.ts';
import { ProtocolClient } from '../../support/clients/protocol-client.ts';
import { type Harness, useHarness } from '../../support/harness.ts';
import { waitFor } from '../../support/wait-for.ts';

const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

const HOUR = 3_600_000;

/** One stream: its subscribe fields and how its messages name it. */
interface Stream {
  readonly request: Record<string, unknown>;
  readonly channel: string;
  /** The market (or `rest` path) its messages carry. */
  readonly key: string;
  readonly depth?: number | null;
  readonly group?: string;
  /** Messages the live client must hold before the time is chosen amid them. */
  readonly enough: number;
}

const isOf = (stream: Stream) => (message: Message) =>
  (message.type === 'snapshot' || message.type === 'update') &&
  message.channel === stream.channel &&
  (message.channel === 'rest' ? message.path : message.market) === stream.key &&
  (stream.depth === undefined || message.depth === stream.depth) &&
  message.group === stream.group;

const messagesOf = (client: MessageRecorder, stream: Stream) => client.messages.filter(isOf(stream));

/** Feeds messages to the recorder's own state keeping: a client's state at any seq. */
class Replayer extends MessageRecorder {
  feed(message: Message): void {
    this.record(message);
  }
}

function stateAfter(live: Message[], seq: number): unknown {
  const replayer = new Replayer();
  for (const message of live) {
    replayer.feed(message);
    if (message.seq === seq) break;
  }
  expect(replayer.violations).toEqual([]);
  return [...replayer.streams.values()][0]?.state;
}

/**
 * A message as JSON carries it: the compact decoder also names a `rest` stream's path `market`, as
 * the SDK reads every stream (packages/protocol compact.ts), which the JSON form does not send.
 */
function plain(value: unknown): unknown {
  const copy = JSON.parse(JSON.stringify(value)) as unknown;
  if (typeof copy === 'object' && copy !== null && 'path' in copy && 'market' in copy) {
    const { market: _sameAsPath, ...message } = copy;
    return message;
  }
  return copy;
}

function expectStitched(label: string, answer: Message[], live: Message[], since: number): void {
  const [first, ...rest] = answer;
  const before = live.filter((message) => Date.parse(message.rts as string) <= since);
  const at = before.at(-1)!;
  expect
    .soft(first, label)
    .toMatchObject({ type: 'snapshot', epoch: at.epoch, seq: at.seq, ts: at.ts, rts: at.rts });
  if (at.checksum !== undefined) expect.soft(first?.checksum, label).toBe(at.checksum);
  expect.soft(plain(first?.data), label).toEqual(plain(stateAfter(live, at.seq as number)));
  const after = live.slice(before.length, before.length + rest.length);
  expect(after.length, `${label}: messages after the time`).toBeGreaterThan(0);
  expect.soft(rest.slice(0, after.length).map(plain), label).toEqual(after.map(plain));
}

describe('since a time on every other channel, from the record', () => {
  const { opened, start } = useHarness();

  async function recordingHarness(): Promise<Harness> {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'history-since-channels-'));
    folders.push(dataDir);
    return start({
      sim: { markets: 3, seed: 11, tickMs: 10 },
      relay: { history: { store: 'embedded', dataDir, retentionMs: HOUR, maxBytes: 1024 ** 3 } },
    });
  }

  async function connect(harness: Harness, protocols: string[] = []): Promise<ProtocolClient> {
    const client = await ProtocolClient.connect(harness.relay.url, {}, protocols);
    opened.push(client);
    return client;
  }

  function streamsOf(harness: Harness): Stream[] {
    const [market] = harness.sim.market.activeMarketIds() as [string];
    const feed = harness.sim.market.tokens[0]!.oracleFeedId;
    const detail = `/api/markets/${market}`;
    const keyed = (
      channel: string,
      key: string,
      extra: Record<string, unknown> = {},
      enough = 4,
    ): Stream => ({
      request: { channel, markets: [key], ...extra },
      channel,
      key,
      enough,
      ...(extra as { depth?: number | null; group?: string }),
    });
    return [
      keyed('market', market),
      keyed('markets', 'active'),
      { request: { channel: 'rest', paths: [detail] }, channel: 'rest', key: detail, enough: 4 },
      keyed('oracle', feed, {}, 3),
      keyed('probabilities', 'all'),
      keyed('orders', market, {}, 10),
      keyed('candles', `${market}:1m:trades`),
      keyed('candles', `${market}:1m:probability`),
      keyed('book', market, { depth: 10, group: '0.05' }, 10),
    ];
  }

  it('each stream: the state at the time, every recorded message after it, then live, no gap, no duplicate; also on a compact connection', async () => {
    const harness = await recordingHarness();
    const live = await connect(harness);
    const streams = streamsOf(harness);
    for (const stream of streams) {
      expect(await live.request({ op: 'subscribe', ...stream.request })).toMatchObject({
        type: 'subscribed',
      });
    }
    await waitFor('every stream changing', () =>
      streams.every((stream) => messagesOf(live, stream).length >= stream.enough),
    );
    // From here on the streams need only keep changing: at a tenth of the pace, so that the relay,
    // the simulator and three applying clients sharing this process keep up on a busy machine.
    harness.sim.setTickMs(100);
    // Each stream's time amid what the live client received of it: a state already changed.
    const sinceOf = new Map(
      streams.map((stream) => {
        const received = messagesOf(live, stream);
        return [stream, Date.parse(received[Math.floor(received.length / 2)]!.rts as string) + 1];
      }),
    );
    const seqOf = (client: MessageRecorder, stream: Stream) =>
      client.view(stream.channel, stream.key, stream.depth, stream.group)?.seq ?? 0;

    const late = [await connect(harness), await connect(harness, [COMPACT_SUBPROTOCOL])];
    // Each client asks for every stream at once, and both clients together: a connection answers
    // its requests in order, and the relay's reads of the record share their flushes.
    await Promise.all(
      late.flatMap((client) =>
        streams.map(async (stream) => {
          const since = new Date(sinceOf.get(stream)!).toISOString();
          const answer = await client.request({ op: 'subscribe', ...stream.request, since });
          expect(answer, stream.channel).toMatchObject({
            type: 'subscribed',
            since,
            history: { from: since, complete: true },
          });
        }),
      ),
    );
    // The streams go on changing; the late clients catch up with the live one and go on with it.
    const caughtUp = streams.map((stream) => seqOf(live, stream) + 1);
    await waitFor('the late clients live again', () =>
      late.every((client) => streams.every((stream, i) => seqOf(client, stream) >= caughtUp[i]!)),
    );
    for (const [index, client] of late.entries()) {
      for (const stream of streams) {
        const label = `${index === 0 ? 'json' : 'compact'} ${stream.channel} ${stream.key}`;
        expectStitched(label, messagesOf(client, stream), messagesOf(live, stream), sinceOf.get(stream)!);
      }
      expect(client.violations).toEqual([]);
    }
    expect(late[1]!.compactMessages).toBeGreaterThan(0);

    // An hour back, before the record starts: it says so, from the stream's first recorded message.
    const early = await connect(harness);
    const hourBack = new Date(Date.now() - HOUR + 60_000).toISOString();
    for (const stream of streams.filter(({ channel }) => channel !== 'candles')) {
      const answer = await early.request({ op: 'subscribe', ...stream.request, since: hourBack });
      expect(answer.history, stream.channel).toEqual({
        from: messagesOf(live, stream)[0]!.rts,
        complete: false,
      });
    }
    expect(early.violations).toEqual([]);
  });
});
