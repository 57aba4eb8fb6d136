/**
 * @module bench/scenarios/diff
 * Scenario 5, in-process microbenchmark: the relay's per-poll work on one order book of 10 to
 * 10,000 price levels per side: aggregate the upstream orders into levels (1-3 orders per level,
 * so exact decimal sums happen), diff against the previous state, checksum the new state, and
 * serialise the update. Successive books differ by a few levels, as successive polls do.
 */
import { performance } from 'node:perf_hooks';
import { bookChecksum } from '../../packages/protocol/src/protocol/book.ts';
import { diffBook } from '../../src/relay/channels/book/codec.ts';
import { aggregateBook } from '../../src/relay/channels/book/levels.ts';
import { toFrame } from '../../src/relay/streams/frame.ts';
import type { OrderBook, OrderEntry } from '../../src/upstream/schemas.ts';
import { median, percentile } from '../lib/latency.ts';
import type { BenchOptions } from '../lib/options.ts';
import { progress } from '../lib/progress.ts';

export interface DiffRun {
  levelsPerSide: number;
  ordersPerSide: number;
  iterations: number;
  /** Medians, microseconds per book. */
  aggregateUs: number;
  diffUs: number;
  checksumUs: number;
  /** aggregate + diff + checksum, per iteration: median and p99. */
  totalUs: number;
  totalP99Us: number;
  serialiseUs: number;
  changedLevels: number;
}

const MARKET = '00000000-0000-4000-8000-000000000001';
/** Books in the rotation: each one poll after the previous one. */
const VERSIONS = 16;

/** A deterministic generator, so every run benchmarks the same books. */
function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
}

function price8(units: number): string {
  return (units / 1e8).toFixed(8);
}

function size(random: () => number): string {
  const whole = 1 + Math.floor(random() * 500);
  return random() < 0.5 ? String(whole) : `${whole}.${1 + Math.floor(random() * 9)}`;
}

function side(
  levels: number,
  best: number,
  step: number,
  random: () => number,
  ids: { next: number },
): OrderEntry[] {
  const orders: OrderEntry[] = [];
  for (let k = 0; k < levels; k++) {
    const count = 1 + (k % 3);
    for (let n = 0; n < count; n++)
      orders.push({
        id: String(ids.next++),
        price: price8(best + k * step),
        size: size(random),
        token_id: 1,
      });
  }
  return orders;
}

/** The next poll: a few orders resized, one level gone, one level added. */
function evolve(book: OrderBook, random: () => number, ids: { next: number }): OrderBook {
  const mutate = (orders: OrderEntry[]): OrderEntry[] => {
    const next = orders.slice();
    for (let n = 0; n < 3; n++) {
      const at = Math.floor(random() * Math.min(next.length, 40));
      next[at] = { ...next[at]!, id: String(ids.next++), size: size(random) };
    }
    next.splice(Math.floor(random() * next.length), 1);
    return next;
  };
  return { ...book, bids: mutate(book.bids), asks: mutate(book.asks), timestamp: new Date().toISOString() };
}

function measure(levels: number): DiffRun {
  const random = lcg(levels);
  const ids = { next: 1 };
  const tick = levels > 1_000 ? 1 : 100_000 / levels;
  let book: OrderBook = {
    market_id: MARKET,
    bids: side(levels, 49_000_000, -tick, random, ids),
    asks: side(levels, 51_000_000, tick, random, ids),
    last_price: '0.50000000',
    timestamp: new Date().toISOString(),
  };
  const books: OrderBook[] = [book];
  for (let v = 1; v < VERSIONS; v++) {
    book = evolve(book, random, ids);
    books.push(book);
  }
  const states = books.map((version) => aggregateBook(version));
  const iterations = Math.max(30, Math.min(5_000, Math.round(3_000_000 / levels)));
  const aggregate: number[] = [];
  const diff: number[] = [];
  const checksum: number[] = [];
  const total: number[] = [];
  const serialise: number[] = [];
  let changed = 0;
  for (let i = 0; i < iterations + 10; i++) {
    const v = 1 + (i % (VERSIONS - 1));
    const t0 = performance.now();
    const next = aggregateBook(books[v]!);
    const t1 = performance.now();
    const delta = diffBook(states[v - 1]!, next);
    const t2 = performance.now();
    const sum = bookChecksum(next);
    const t3 = performance.now();
    const frame = toFrame({
      type: 'update',
      channel: 'book',
      market: MARKET,
      epoch: 'benchmark',
      seq: i + 2,
      ts: books[v]!.timestamp,
      rts: books[v]!.timestamp,
      depth: null,
      data: delta ?? { bids: [], asks: [] },
      checksum: sum,
    });
    const t4 = performance.now();
    if (i < 10) continue; // warm-up: the first calls include JIT compilation
    aggregate.push((t1 - t0) * 1000);
    diff.push((t2 - t1) * 1000);
    checksum.push((t3 - t2) * 1000);
    total.push((t3 - t0) * 1000);
    serialise.push((t4 - t3) * 1000);
    changed += (delta?.bids.length ?? 0) + (delta?.asks.length ?? 0) + frame.bytes.length * 0;
  }
  return {
    levelsPerSide: levels,
    ordersPerSide: books[0]!.bids.length,
    iterations,
    aggregateUs: median(aggregate),
    diffUs: median(diff),
    checksumUs: median(checksum),
    totalUs: median(total),
    totalP99Us: percentile(total, 99),
    serialiseUs: median(serialise),
    changedLevels: changed / iterations,
  };
}

export function runDiff(options: BenchOptions): DiffRun[] {
  const runs: DiffRun[] = [];
  for (const levels of options.diffLevels) {
    progress(`diff: book of ${levels} levels per side`);
    runs.push(measure(levels));
  }
  return runs;
}
