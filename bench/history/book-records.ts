/**
 * @module bench/history/book-records
 * Recorded book messages as the history benchmark's relays record them, made in process without a
 * relay: the simulator's busy books (every book moves on every tick), read every 250 ms of its clock
 * at depth 10 as the relay's book channel reads them (aggregated, diffed, each update with the
 * checksum of the book after it), a snapshot first for each book. The sizes and shapes of `data`
 * are then those a store is handed in `npm run bench -- history`.
 */

import { streamKey } from '../../packages/protocol/src/channels/stream-key.ts';
import { type BookState, bookChecksum } from '../../packages/protocol/src/protocol/book.ts';
import type { RecordedMessage } from '../../src/history/store.ts';
import { diffBook } from '../../src/relay/channels/book/codec.ts';
import { aggregateBook } from '../../src/relay/channels/book/levels.ts';
import { MarketSimulation } from '../../src/sim/market-simulation.ts';

const DEPTH = 10;
const POLL_MS = 250;
/** The simulator of the history benchmark ticks every 100 ms: 2.5 ticks between two polls. */
const SIM_TICK_MS = 100;

/**
 * `count` book messages of `books` busy books, in the order a relay records them, ending about now:
 * as sent (a snapshot, then updates), or with `form` `snapshots` each a snapshot of the book at
 * that time (what a larger message costs: about 4x the bytes of an update).
 */
export function bookRecords(
  count: number,
  form: 'updates' | 'snapshots' = 'updates',
  books = 50,
  seed = 48,
): RecordedMessage[] {
  const polls = Math.ceil(count / books) + 1;
  let clock = Date.now() - polls * POLL_MS;
  const sim = new MarketSimulation({ markets: books, seed, now: () => clock });
  const markets = sim.activeMarketIds().slice(0, books);
  const held = new Map<string, { book: BookState; seq: number }>();
  const records: RecordedMessage[] = [];
  for (let nextPoll = clock + POLL_MS; records.length < count; nextPoll += POLL_MS) {
    while (clock + SIM_TICK_MS <= nextPoll) {
      clock += SIM_TICK_MS;
      sim.tick();
    }
    clock = nextPoll;
    for (const market of markets) {
      const orderBook = sim.orderBook(market);
      if (orderBook === undefined) continue;
      const book = aggregateBook(orderBook, DEPTH);
      const before = held.get(market);
      const data = before === undefined || form === 'snapshots' ? book : diffBook(before.book, book);
      if (data === null) continue;
      const seq = (before?.seq ?? 0) + 1;
      held.set(market, { book, seq });
      records.push({
        channel: 'book',
        stream: streamKey('book', market, DEPTH),
        market,
        depth: DEPTH,
        epoch: 'bench',
        seq,
        ts: new Date(clock - 40).toISOString(),
        rts: new Date(clock).toISOString(),
        type: before === undefined || form === 'snapshots' ? 'snapshot' : 'update',
        data: JSON.stringify(data),
        checksum: bookChecksum(book),
      });
      if (records.length === count) break;
    }
  }
  return records;
}
