/**
 * @module bench/history/seed
 * "One hour" of one busy book, written straight into a store before its relay starts (seconds, not
 * an hour): a snapshot, then an update every 250 ms, each moving one or two of its levels by the
 * protocol's rules and carrying the checksum of the depth-10 book after it, as the relay would have
 * sent and recorded them (epoch `seeded`, `rts` spaced by the poll interval, `ts` 40 ms before).
 */

import { streamKey } from '../../packages/protocol/src/channels/stream-key.ts';
import { applyBookUpdate, type BookState, bookChecksum } from '../../packages/protocol/src/protocol/book.ts';
import type { BookData, Level } from '../../packages/protocol/src/protocol/messages.ts';
import { openDuckDbStore } from '../../src/history/duckdb-store.ts';
import type { RecordedMessage } from '../../src/history/store.ts';
import { limitDepth } from '../../src/relay/channels/book/codec.ts';

const DEPTH = 10;
const BATCH = 3_600;

export interface SeededRecord {
  market: string;
  stream: string;
  /** Epoch ms of the first and just past the last record. */
  from: number;
  to: number;
  messages: number;
}

/** Writes `durationMs` of `market`'s book, one message per `intervalMs`, ending `endsAgoMs` before now. */
export async function seedBook(
  dataDir: string,
  market: string,
  { durationMs, intervalMs, endsAgoMs }: { durationMs: number; intervalMs: number; endsAgoMs: number },
): Promise<SeededRecord> {
  const to = Date.now() - endsAgoMs;
  const from = to - durationMs;
  const stream = streamKey('book', market, DEPTH);
  const store = await openDuckDbStore(dataDir);
  let book: BookState = { bids: levels(0.3, -0.01), asks: levels(0.32, 0.01) };
  let batch: RecordedMessage[] = [];
  let messages = 0;
  try {
    for (let at = from, seq = 1; at < to; at += intervalMs, seq += 1) {
      const change = seq === 1 ? book : levelChange(seq);
      book = seq === 1 ? book : applyBookUpdate(book, change);
      const sent = limitDepth(book, DEPTH);
      batch.push({
        channel: 'book',
        stream,
        market,
        depth: DEPTH,
        epoch: 'seeded',
        seq,
        ts: new Date(at - 40).toISOString(),
        rts: new Date(at).toISOString(),
        type: seq === 1 ? 'snapshot' : 'update',
        data: JSON.stringify(seq === 1 ? sent : change),
        checksum: bookChecksum(sent),
      });
      messages += 1;
      if (batch.length === BATCH) {
        await store.append(batch);
        batch = [];
      }
    }
    if (batch.length > 0) await store.append(batch);
  } finally {
    await store.close();
  }
  return { market, stream, from, to, messages };
}

/**
 * The stream's depth of levels from `best`, a cent apart in the direction of `step`: every update
 * moves one of these prices, so the book never holds a level past the depth that a removal would
 * bring into view (which the update would then have to carry).
 */
function levels(best: number, step: number): Level[] {
  return Array.from(
    { length: DEPTH },
    (_, i) => [(best + i * step).toFixed(8), String(100 + i * 7)] as Level,
  );
}

/** The `seq`th update: a size changed among the book's levels, now and then a level removed and put back. */
function levelChange(seq: number): BookData {
  const level = seq % 10;
  const size = seq % 17 === 0 ? '0' : `${(seq * 37) % 5_000}.${seq % 1_000}`;
  const bid: Level = [(0.3 - level * 0.01).toFixed(8), size];
  const ask: Level = [(0.32 + level * 0.01).toFixed(8), `${(seq * 53) % 4_000}`];
  return seq % 2 === 0 ? { bids: [bid], asks: [] } : { bids: [bid], asks: [ask] };
}
