/**
 * The seam of a `trades` subscription with `since` (relay/session/since-seam.ts), on a real stream
 * and a history read the test settles: the snapshot holds the history, the join state and the held
 * updates, each `activity_id` once, at the seq of the last held update; history entries beyond what
 * the stream has delivered are left to the live updates (sent once, not twice); nothing goes out
 * before the request releases it (its `subscribed`, with where the history starts, goes first); a
 * listing that ends after the time asked says `complete: false`; a failed read is an error with
 * the request's id naming the market; a stream left while its read runs gets nothing.
 */
import { describe, expect, it } from 'vitest';
import type { TradeEntry } from '../../../packages/protocol/src/channels/trades/trades.ts';
import type { ServerMessage } from '../../../packages/protocol/src/protocol/messages.ts';
import { codecs } from '../../../src/relay/channels/codecs.ts';
import type { SinceRead } from '../../../src/relay/channels/trades/relay-since.ts';
import { SinceSeams } from '../../../src/relay/session/since-seam.ts';
import type { Frame } from '../../../src/relay/streams/frame.ts';
import { type AnyStream, Stream, type StreamSubscriber } from '../../../src/relay/streams/stream.ts';

const market = '3f2b8c1e-5d4a-4e6b-9c7d-1a2b3c4d5e6f';
const trade = (n: number): TradeEntry => ({
  activity_id: `t${n}`,
  activity_type: 'TRADE',
  price: '0.5',
  size: '1',
  total_value: '0.5',
  activity_timestamp: new Date(Date.UTC(2026, 0, 1, 12, 0, n)).toISOString(),
});
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => trade(from + i));
const ids = (entries: readonly TradeEntry[]) => entries.map((entry) => entry.activity_id);
const since = { kind: 'time', at: Date.UTC(2026, 0, 1, 12, 0, 10), text: '2026-01-01T12:00:10Z' } as const;

function setUp() {
  const stream = new Stream({ channel: 'trades', market }, codecs.trades, 100) as unknown as AnyStream;
  const written: { type: string; seq?: number; trades?: string[] }[] = [];
  const errors: ServerMessage[] = [];
  let settle: (read: SinceRead) => void = () => {};
  let reads = 0;
  const seams: SinceSeams = new SinceSeams({
    read: () => {
      reads += 1;
      return new Promise((resolve) => {
        settle = resolve;
      });
    },
    deliver: (_, frame) => record(frame),
    fail: (_, error) => errors.push(error),
  });
  const record = (frame: Frame) => {
    const message = JSON.parse(frame.text) as { type: string; seq: number; data: { trades: TradeEntry[] } };
    written.push({ type: message.type, seq: message.seq, trades: ids(message.data.trades) });
  };
  const subscriber: StreamSubscriber = {
    deliver: (from, frame) => {
      if (!seams.hold(from, frame)) record(frame);
    },
    notify: () => undefined,
    ended: () => undefined,
  };
  stream.subscribers.add(subscriber);
  const publish = (trades: TradeEntry[]) => stream.publish({ trades }, '', '', Date.now());
  return {
    stream,
    seams,
    written,
    errors,
    publish,
    settle: (read: SinceRead) => settle(read),
    reads: () => reads,
  };
}

describe('since seam', () => {
  it('merges history, join state and held updates once each, and leaves trades beyond the stream to the live updates', async () => {
    const { stream, seams, written, publish, settle, reads } = setUp();
    publish(range(0, 20)); // the stream's state at the join: t0..t19
    written.length = 0; // what the subscriber was sent before it asked for history
    const begun = seams.begin(since, 7, [{ market, stream, replay: undefined }]);
    expect(reads()).toBe(1);
    publish([...range(0, 20), ...range(20, 23)]); // held: t20..t22
    // The history was read after the join and reaches t25, which the stream has not delivered yet.
    settle({ ok: true, trades: range(10, 26), pages: 1 });
    // Where the answer starts is known before anything of the stream goes out (`subscribed` first).
    expect(await begun?.ready).toEqual({ from: since.text, complete: true });
    publish([...range(0, 23), ...range(23, 24)]); // still held: t23
    expect(written).toEqual([]);
    begun?.release();
    expect(written).toEqual([{ type: 'snapshot', seq: 3, trades: ids(range(10, 24)) }]);
    publish([...range(0, 24), ...range(24, 26)]); // t24, t25: the history's last entries, once
    expect(written.at(-1)).toEqual({ type: 'update', seq: 4, trades: ids(range(24, 26)) });
  });

  it("says complete: false from where upstream's listing starts when it ends after the time asked", async () => {
    const { stream, seams, written, publish, settle } = setUp();
    publish(range(12, 15));
    written.length = 0;
    const begun = seams.begin(since, 8, [{ market, stream, replay: undefined }]);
    const startsAt = Date.parse(trade(12).activity_timestamp);
    settle({ ok: true, trades: range(12, 15), pages: 1, startsAt });
    expect(await begun?.ready).toEqual({ from: trade(12).activity_timestamp, complete: false });
    begun?.release();
    expect(written).toEqual([{ type: 'snapshot', seq: 1, trades: ids(range(12, 15)) }]);
  });

  it('waits for the stream state before reading; a failed read is an error with the id naming the market', async () => {
    const { stream, seams, written, errors, publish, settle, reads } = setUp();
    const begun = seams.begin(since, 'r1', [{ market, stream, replay: undefined }]);
    expect(reads()).toBe(0);
    publish(range(0, 5));
    expect(reads()).toBe(1);
    settle({ ok: false, reason: 'too_many', message: 'more than 10000', pages: 100 });
    expect(await begun?.ready).toBeUndefined();
    expect(errors).toEqual([]);
    begun?.release();
    expect(written).toEqual([]);
    expect(errors).toEqual([
      {
        type: 'error',
        id: 'r1',
        code: 'limit_exceeded',
        message: 'more than 10000',
        channel: 'trades',
        market,
      },
    ]);
  });

  it('sends nothing for a stream left while its history is read', async () => {
    const { stream, seams, written, publish, settle } = setUp();
    publish(range(0, 5));
    written.length = 0;
    const begun = seams.begin(since, 1, [{ market, stream, replay: undefined }]);
    seams.drop(stream.key);
    settle({ ok: true, trades: range(0, 5), pages: 1 });
    await begun?.ready;
    begun?.release();
    publish(range(0, 6));
    expect(written).toEqual([{ type: 'update', seq: 2, trades: ['t5'] }]);
  });
});
