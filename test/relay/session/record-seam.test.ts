/**
 * A `since` answered from the record (relay/session/record-seam.ts), on a real stream recorded by
 * a real recorder into a store kept in memory: the state at the time, the recorded messages after
 * it and the live ones held meanwhile, each once; a write the recorder lost is never a gap (sent
 * from the stream's resume ring, or the stream's current snapshot in its place); a store that cannot be read is an error with the
 * request's id naming the market, and the subscription is left.
 */
import { describe, expect, it } from 'vitest';
import type { ServerMessage } from '../../../packages/protocol/src/protocol/messages.ts';
import { HistoryRecorder, listBuffer } from '../../../src/history/recorder.ts';
import type { HistoryStore, RecordedMessage } from '../../../src/history/store.ts';
import { codecs } from '../../../src/relay/channels/codecs.ts';
import { SinceSeams } from '../../../src/relay/session/since-seam.ts';
import type { Frame } from '../../../src/relay/streams/frame.ts';
import { recordedOf } from '../../../src/relay/streams/recorded.ts';
import { type AnyStream, Stream, type StreamSubscriber } from '../../../src/relay/streams/stream.ts';

const market = '3f2b8c1e-5d4a-4e6b-9c7d-1a2b3c4d5e6f';
const base = Date.UTC(2026, 0, 1, 12);
const at = (second: number) => new Date(base + second * 1000).toISOString();

/** Keeps what it is given in memory; `lose` drops the seqs named from a write, `broken` fails reads. */
function memoryStore(lose: ReadonlySet<number> = new Set(), broken = false): HistoryStore {
  const rows: RecordedMessage[] = [];
  const inRange = (row: RecordedMessage, stream: string, from: number, to: number) =>
    row.stream === stream && Date.parse(row.rts) >= from && Date.parse(row.rts) < to;
  return {
    description: 'memory',
    async append(batch) {
      rows.push(...batch.filter((row) => !lose.has(row.seq)));
    },
    async *read({ stream, from, to }) {
      if (broken) throw new Error('the store file is unreadable');
      yield* rows.filter((row) => inRange(row, stream, from, to));
    },
    async writeParquet() {},
    async extent(stream) {
      const held = rows.filter((row) => row.stream === stream);
      if (held.length === 0) return undefined;
      return { oldest: Date.parse(held[0]!.rts), newest: Date.parse(held.at(-1)!.rts), rows: held.length };
    },
    async lastSnapshot(stream, at) {
      const held = rows.filter((row) => row.stream === stream && row.type === 'snapshot');
      return held.map((row) => Date.parse(row.rts)).findLast((rts) => rts <= at);
    },
    async enforceRetention() {
      return 0;
    },
    async stats() {
      return { rows: rows.length, bytes: 0, oldest: undefined };
    },
    async close() {},
  };
}

interface Sent {
  type: string;
  seq: number;
  bid: string | undefined;
}

/** `ring`: the updates the stream keeps for resume. */
function setUp(store: HistoryStore, ring = 100) {
  const stream = new Stream({ channel: 'price', market }, codecs.price, ring) as unknown as AnyStream;
  const recorder = new HistoryRecorder<{ frame: Frame; kind: 'snapshot' | 'update' }>({
    store,
    buffer: listBuffer(({ frame, kind }: { frame: Frame; kind: 'snapshot' | 'update' }) =>
      recordedOf(stream, { text: frame.text, position: frame.position }, kind),
    ),
    flushMs: 60_000,
    retention: { maxAgeMs: 86_400_000, maxBytes: 1024 ** 3 },
    retentionMs: 60_000,
    maxPending: 1_000,
    statsMs: 60_000,
  });
  const written: Sent[] = [];
  const errors: ServerMessage[] = [];
  const write = (frame: Frame) => {
    const message = JSON.parse(frame.text) as { type: string; seq: number; data: { best_bid?: string } };
    written.push({ type: message.type, seq: message.seq, bid: message.data.best_bid });
  };
  const seams: SinceSeams = new SinceSeams({
    record: recorder,
    deliver: (_, frame) => write(frame),
    fail: (_, error) => errors.push(error),
  });
  const subscriber: StreamSubscriber = {
    deliver: (from, frame, kind) => {
      recorder.record({ frame, kind: kind ?? 'update' });
      if (!seams.hold(from, frame)) write(frame);
    },
    notify: () => undefined,
    ended: () => undefined,
  };
  stream.subscribers.add(subscriber);
  let second = 0;
  const publish = (bid: string) => {
    second += 1;
    stream.publish({ best_bid: bid }, at(second), at(second), base + second * 1000);
  };
  const since = (s: number) => ({ kind: 'time', at: base + s * 1000, text: at(s) }) as const;
  return { stream, seams, written, errors, publish, since, recorder };
}

describe('record seam', () => {
  it('sends the state at the time, every recorded message after it, then the held ones, each once', async () => {
    const { stream, seams, written, publish, since } = setUp(memoryStore());
    for (const bid of ['0.1', '0.2', '0.3', '0.4', '0.5']) publish(bid); // seq 1..5 at seconds 1..5
    written.length = 0;
    const begun = seams.begin(since(2), 'r1', [{ market, stream, replay: undefined }]);
    publish('0.6'); // held while the record is read
    expect(await begun?.ready).toEqual({ from: at(2), complete: true });
    expect(written).toEqual([]);
    begun?.release();
    await new Promise((resolve) => setTimeout(resolve, 0));
    publish('0.7'); // live again, no longer held
    expect(written).toEqual([
      { type: 'snapshot', seq: 2, bid: '0.2' },
      ...[3, 4, 5, 6, 7].map((seq) => ({ type: 'update', seq, bid: `0.${seq}` })),
    ]);
  });

  it('sends a write the recorder lost from the resume ring: every update, no gap', async () => {
    const { stream, seams, written, publish, since } = setUp(memoryStore(new Set([4])));
    for (const bid of ['0.1', '0.2', '0.3', '0.4', '0.5']) publish(bid);
    written.length = 0;
    const begun = seams.begin(since(1), 7, [{ market, stream, replay: undefined }]);
    await begun?.ready;
    begun?.release();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(written).toEqual([
      { type: 'snapshot', seq: 1, bid: '0.1' },
      ...[2, 3, 4, 5].map((seq) => ({ type: 'update', seq, bid: `0.${seq}` })),
    ]);
  });

  it('puts the current snapshot where neither the record nor the ring has a write: no gap', async () => {
    const { stream, seams, written, publish, since } = setUp(memoryStore(new Set([4])), 1);
    for (const bid of ['0.1', '0.2', '0.3', '0.4', '0.5']) publish(bid);
    written.length = 0;
    const begun = seams.begin(since(1), 7, [{ market, stream, replay: undefined }]);
    await begun?.ready;
    begun?.release();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(written).toEqual([
      { type: 'snapshot', seq: 1, bid: '0.1' },
      { type: 'update', seq: 2, bid: '0.2' },
      { type: 'update', seq: 3, bid: '0.3' },
      { type: 'snapshot', seq: 5, bid: '0.5' },
    ]);
  });

  it('says complete: false from the first snapshot recorded when the record starts after the time', async () => {
    const { stream, seams, written, publish, since } = setUp(memoryStore());
    publish('0.1');
    publish('0.2');
    written.length = 0;
    const begun = seams.begin(since(0), 1, [{ market, stream, replay: undefined }]);
    expect(await begun?.ready).toEqual({ from: at(1), complete: false });
    begun?.release();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(written).toEqual([
      { type: 'snapshot', seq: 1, bid: '0.1' },
      { type: 'update', seq: 2, bid: '0.2' },
    ]);
  });

  it('answers a store that cannot be read with an error naming the market, with the id', async () => {
    const { stream, seams, written, errors, publish, since } = setUp(memoryStore(new Set(), true));
    publish('0.1');
    written.length = 0;
    const begun = seams.begin(since(1), 'r9', [{ market, stream, replay: undefined }]);
    expect(await begun?.ready).toBeUndefined();
    begun?.release();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(written).toEqual([]);
    expect(errors).toEqual([
      expect.objectContaining({
        type: 'error',
        id: 'r9',
        code: 'upstream_unavailable',
        channel: 'price',
        market,
      }),
    ]);
  });
});
