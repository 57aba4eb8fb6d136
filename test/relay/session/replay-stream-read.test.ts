/**
 * What a replay sends of one stream (src/relay/session/replay/stream-read.ts): the stream's state at
 * `from` as one `snapshot` at the position, times and checksum of the last message at or before it,
 * timed at `from`, then the recorded messages after that one; a stream with no state at `from`
 * starting at its first snapshot in the range, the updates before it left out.
 */
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { type BookState, bookChecksum } from '../../../packages/protocol/src/protocol/book.ts';
import type { HistoryStore, RecordedMessage } from '../../../src/history/store.ts';
import { streamFromState } from '../../../src/relay/session/replay/stream-read.ts';

const T0 = Date.parse('2026-12-01T10:00:00.000Z');
const MARKET = '6f1c2a3e-0000-4000-8000-00000000000a';
const KEY = `book:${MARKET}:full`;

function book(seq: number, at: number, type: 'snapshot' | 'update', data: BookState): RecordedMessage {
  const time = new Date(at).toISOString();
  return {
    channel: 'book',
    stream: KEY,
    market: MARKET,
    depth: null,
    epoch: 'e1',
    seq,
    ts: time,
    rts: time,
    type,
    data: JSON.stringify(data),
    checksum: 0,
  };
}

/** A store holding `records` (one stream, in `rts` order): only what a replay reads of it. */
function memoryStore(records: readonly RecordedMessage[]): HistoryStore {
  const rts = (record: RecordedMessage) => Date.parse(record.rts);
  return {
    description: 'memory',
    async append() {},
    async *read({ from, to }) {
      yield* records.filter((record) => rts(record) >= from && rts(record) < to);
    },
    async writeParquet() {},
    async extent() {
      return records.length === 0
        ? undefined
        : { oldest: rts(records[0]!), newest: rts(records.at(-1)!), rows: records.length };
    },
    async lastSnapshot(_stream, at) {
      return records
        .filter((record) => record.type === 'snapshot')
        .map(rts)
        .findLast((time) => time <= at);
    },
    async enforceRetention() {
      return 0;
    },
    async stats() {
      return { rows: records.length, bytes: 0, oldest: undefined };
    },
    async close() {},
  };
}

async function replayed(store: HistoryStore, from: number, to: number) {
  const sent = [];
  for await (const next of streamFromState(store, KEY, from, to)) sent.push(next);
  return sent;
}

const records = [
  book(1, T0, 'snapshot', { bids: [['0.50', '10']], asks: [['0.52', '5']] }),
  book(2, T0 + 100, 'update', { bids: [['0.51', '3']], asks: [] }),
  book(3, T0 + 200, 'update', { bids: [], asks: [['0.52', '0']], last_price: '0.51' }),
  book(4, T0 + 300, 'update', { bids: [['0.50', '0']], asks: [['0.53', '7']] }),
];

describe('a replayed stream', () => {
  it('starts with its state at from, at the last message at or before it, then what follows', async () => {
    const sent = await replayed(memoryStore(records), T0 + 200, T0 + 1_000);
    const state: BookState = {
      bids: [
        ['0.51', '3'],
        ['0.50', '10'],
      ],
      asks: [],
      last_price: '0.51',
    };
    expect(sent.map(({ record }) => [record.type, record.seq])).toEqual([
      ['snapshot', 3],
      ['update', 4],
    ]);
    const [first] = sent;
    expect(first!.rts).toBe(T0 + 200);
    expect(first!.record).toMatchObject({
      epoch: 'e1',
      ts: new Date(T0 + 200).toISOString(),
      rts: new Date(T0 + 200).toISOString(),
      checksum: bookChecksum(state, crc32),
    });
    expect(JSON.parse(first!.record.data)).toEqual(state);
  });

  it('is timed at from when its last message came earlier', async () => {
    const sent = await replayed(memoryStore(records), T0 + 250, T0 + 1_000);
    expect(sent.map(({ record, rts }) => [record.type, record.seq, rts])).toEqual([
      ['snapshot', 3, T0 + 250],
      ['update', 4, T0 + 300],
    ]);
    expect(sent[0]!.record.rts).toBe(new Date(T0 + 200).toISOString());
  });

  it('with no state at from starts at its first snapshot in the range', async () => {
    const cut = [
      records[1]!,
      records[2]!,
      book(9, T0 + 250, 'snapshot', { bids: [], asks: [] }),
      records[3]!,
    ];
    const later = await replayed(
      memoryStore(cut.map((r, i) => (i === 3 ? { ...r, seq: 10 } : r))),
      T0,
      T0 + 1_000,
    );
    expect(later.map(({ record }) => [record.type, record.seq])).toEqual([
      ['snapshot', 9],
      ['update', 10],
    ]);
    expect(await replayed(memoryStore([]), T0, T0 + 1_000)).toEqual([]);
  });
});
