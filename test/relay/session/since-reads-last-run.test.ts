/**
 * The record's last unbroken run as `trades` `since` reads it (relay/session/since-reads.ts), over
 * the embedded store: read from the stream's last snapshot on (not its whole look-back), and
 * whether it reaches the subscriber's join in the subscriber's epoch (else another relay's run, or
 * this relay's before a restart: channels/trades/relay-since-record.ts reads around it).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { streamKey } from '../../../packages/protocol/src/channels/stream-key.ts';
import { openDuckDbStore } from '../../../src/history/duckdb-store.ts';
import type { RecordReader } from '../../../src/history/recorder.ts';
import type { HistoryRange, HistoryStore, RecordedMessage } from '../../../src/history/store.ts';
import type { ChannelUpstream } from '../../../src/relay/channels/relay-registry.ts';
import { SinceReads } from '../../../src/relay/session/since-reads.ts';

const MARKET = '6f1c2a3e-0000-4000-8000-00000000a001';
const STREAM = streamKey('trades', MARKET);
const T0 = Date.now() - 3_600_000;

const closing: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0)) await close();
});

function message(epoch: string, seq: number, at: number, type: 'snapshot' | 'update'): RecordedMessage {
  const time = new Date(at).toISOString();
  return {
    channel: 'trades',
    stream: STREAM,
    market: MARKET,
    depth: undefined,
    epoch,
    seq,
    ts: time,
    rts: time,
    type,
    data: JSON.stringify({ trades: [{ activity_id: `${epoch}-${seq}` }] }),
    checksum: undefined,
  };
}

/** SinceReads over an embedded store holding `records`; `ranges`: what the store was asked to read. */
async function readsOver(records: RecordedMessage[]) {
  const folder = mkdtempSync(path.join(tmpdir(), 'since-last-run-'));
  const store = await openDuckDbStore(folder);
  closing.push(async () => {
    await store.close();
    rmSync(folder, { recursive: true, force: true });
  });
  await store.append(records);
  const ranges: HistoryRange[] = [];
  const watched: HistoryStore = {
    description: store.description,
    append: (batch) => store.append(batch),
    read: (range) => {
      ranges.push(range);
      return store.read(range);
    },
    writeParquet: (range, file) => store.writeParquet(range, file),
    extent: (stream) => store.extent(stream),
    lastSnapshot: (stream, at) => store.lastSnapshot(stream, at),
    enforceRetention: (policy, now) => store.enforceRetention(policy, now),
    stats: () => store.stats(),
    close: () => store.close(),
  };
  const record = { store: watched, flush: async () => undefined } as unknown as RecordReader;
  const reads = new SinceReads({
    upstream: {} as ChannelUpstream,
    budget: { runOneOff: (work) => work() },
    slotWaitMs: 1_000,
    position: () => undefined,
    record,
  });
  return { reads, ranges };
}

const ids = (data: unknown[] | undefined) =>
  (data as { trades: { activity_id: string }[] }[] | undefined)?.flatMap((item) =>
    item.trades.map((trade) => trade.activity_id),
  );

describe('the record’s last run for trades since', () => {
  it('reads from the stream’s last snapshot on, and says whether the run reaches the join', async () => {
    const { reads, ranges } = await readsOver([
      message('e1', 1, T0, 'snapshot'),
      ...[2, 3, 4, 5].map((seq) => message('e1', seq, T0 + seq * 100, 'update')),
      // A restart: a new epoch from a snapshot.
      message('e2', 1, T0 + 2_000, 'snapshot'),
      message('e2', 2, T0 + 2_100, 'update'),
      message('e2', 3, T0 + 2_200, 'update'),
    ]);
    const after = Date.now() - 24 * 3_600_000;
    const joined = await reads.recorded({ epoch: 'e2', seq: 3 }).lastRun('trades', MARKET, after);
    expect(joined).toMatchObject({ reachesJoin: true });
    expect(ids(joined?.data)).toEqual(['e2-1', 'e2-2', 'e2-3']);
    expect(ranges.map((range) => range.from)).toEqual([T0 + 2_000]);
    // A subscriber of another epoch (another relay, or this one since a restart).
    const other = await reads.recorded({ epoch: 'e3', seq: 1 }).lastRun('trades', MARKET, after);
    expect(other).toMatchObject({ reachesJoin: false });
    expect(ids(other?.data)).toEqual(['e2-1', 'e2-2', 'e2-3']);
  });

  it('reads from the time asked when the last snapshot is older', async () => {
    const { reads, ranges } = await readsOver([
      message('e1', 1, T0, 'snapshot'),
      ...[2, 3].map((seq) => message('e1', seq, T0 + seq * 100, 'update')),
    ]);
    const run = await reads.recorded({ epoch: 'e1', seq: 3 }).lastRun('trades', MARKET, T0 + 150);
    // No snapshot after the time: no run.
    expect(run).toBeUndefined();
    expect(ranges.map((range) => range.from)).toEqual([T0 + 150]);
  });
});
