/**
 * The recorder never makes a sender wait and never loses its footing: a store that fails (a full
 * or unwritable disk) is counted and retried at the next flush, recording resumes when it works
 * again, and the buffer stays within its bound.
 */
import { describe, expect, it } from 'vitest';
import { HistoryRecorder, listBuffer } from '../../src/history/recorder.ts';
import type { HistoryStore, RecordedMessage } from '../../src/history/store.ts';
import { waitFor } from '../support/wait-for.ts';

/** A store that keeps what it is given in memory, and fails every write while `full` is set. */
function fakeStore() {
  const written: RecordedMessage[] = [];
  const state = { full: false, away: false };
  const store: HistoryStore = {
    description: 'memory',
    async append(batch) {
      if (state.full) throw new Error('ENOSPC: no space left on device');
      written.push(...batch);
    },
    async *read() {},
    async writeParquet() {},
    async extent() {
      return undefined;
    },
    async lastSnapshot() {
      return undefined;
    },
    async enforceRetention() {
      return 0;
    },
    async stats() {
      if (state.away) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
      return { rows: written.length, bytes: written.length * 10, oldest: undefined };
    },
    async close() {},
  };
  return { store, written, state };
}

function priceUpdate(seq: number): RecordedMessage {
  return {
    channel: 'price',
    stream: 'price:m',
    market: 'm',
    depth: undefined,
    epoch: 'e',
    seq,
    ts: '2026-12-01T00:00:00.000Z',
    rts: '2026-12-01T00:00:00.000Z',
    type: 'update',
    data: '{}',
    checksum: undefined,
  };
}

function recorder(store: HistoryStore, maxPending = 100, flushMs = 1_000) {
  return new HistoryRecorder<number>({
    store,
    buffer: listBuffer(priceUpdate),
    flushMs,
    retention: { maxAgeMs: 60_000, maxBytes: 1024 },
    retentionMs: 60_000,
    maxPending,
    statsMs: 60_000,
  });
}

describe('HistoryRecorder', () => {
  it('counts a failed write, keeps serving, and records again once the store can write', async () => {
    const { store, written, state } = fakeStore();
    const changes: boolean[] = [];
    const subject = new HistoryRecorder({
      ...{ store, buffer: listBuffer((item: RecordedMessage) => item) },
      flushMs: 1_000,
      retention: { maxAgeMs: 60_000, maxBytes: 1024 },
      retentionMs: 60_000,
      maxPending: 100,
      statsMs: 60_000,
      onWriteState: (failing) => changes.push(failing),
    });
    const plain = recorder(store);
    plain.record(1);
    await plain.flush();
    expect(written.map((row) => row.seq)).toEqual([1]);

    state.full = true;
    subject.record(written[0]!);
    subject.record(written[0]!);
    await subject.flush();
    expect(subject.stats()).toMatchObject({ failing: true, writeFailures: 1, dropped: 2, written: 0 });
    expect(subject.stats().lastError).toMatch(/ENOSPC/);

    state.full = false;
    subject.record(written[0]!);
    await subject.flush();
    expect(subject.stats()).toMatchObject({
      failing: false,
      writeFailures: 1,
      written: 1,
      lastError: undefined,
    });
    expect(changes).toEqual([true, false]);
  });

  it('counts a message its buffer cannot take as dropped, and never throws to the sender', async () => {
    const { store, written } = fakeStore();
    const items = listBuffer(priceUpdate);
    const subject = new HistoryRecorder<number>({
      store,
      buffer: {
        get length() {
          return items.length;
        },
        push: (seq) => {
          if (seq === 2) throw new RangeError('Array buffer allocation failed');
          items.push(seq);
        },
        take: () => items.take(),
      },
      flushMs: 1_000,
      retention: { maxAgeMs: 60_000, maxBytes: 1024 },
      retentionMs: 60_000,
      maxPending: 100,
      statsMs: 60_000,
    });
    for (const seq of [1, 2, 3]) expect(() => subject.record(seq)).not.toThrow();
    await subject.flush();
    expect(written.map((row) => row.seq)).toEqual([1, 3]);
    expect(subject.stats()).toMatchObject({ written: 2, dropped: 1 });
  });

  it('drops and counts what comes past its bound instead of growing', async () => {
    const { store, written } = fakeStore();
    const subject = recorder(store, 3);
    for (let seq = 1; seq <= 5; seq += 1) subject.record(seq);
    expect(subject.stats()).toMatchObject({ pending: 3, dropped: 2 });
    await subject.flush();
    expect(written.map((row) => row.seq)).toEqual([1, 2, 3]);
    await subject.refreshStats();
    expect(subject.stats().stored.rows).toBe(3);
  });

  it('says whether the store answers, from its writes and from the reads of what it holds', async () => {
    const { store, state } = fakeStore();
    const history = recorder(store);
    expect(history.stats().reachable).toBe(true);
    state.away = true;
    await history.refreshStats();
    expect(history.stats().reachable).toBe(false);
    state.away = false;
    await history.refreshStats();
    expect(history.stats().reachable).toBe(true);
    state.full = true;
    history.record(1);
    await history.flush();
    expect(history.stats()).toMatchObject({ reachable: false, failing: true });
    state.full = false;
    history.record(2);
    await history.flush();
    expect(history.stats()).toMatchObject({ reachable: true, failing: false });
  });
  it('reads a flush window of messages into records a slice at a time, the event loop served between', async () => {
    const { store, written } = fakeStore();
    const recording = recorder(store, 5_000);
    for (let seq = 1; seq <= 2_000; seq += 1) recording.record(seq);
    // A callback queued as the flush starts runs while the batch is still being read.
    let writtenWhenServed: number | undefined;
    const flushed = recording.flush();
    setImmediate(() => {
      writtenWhenServed = written.length;
    });
    await flushed;
    expect(writtenWhenServed).toBe(0);
    expect(written.map((record) => record.seq)).toEqual(Array.from({ length: 2_000 }, (_, i) => i + 1));
  });
  it('writes soon when asked, before the flush window ends, once for many asks', async () => {
    const { store, written } = fakeStore();
    let appends = 0;
    const append = store.append.bind(store);
    store.append = async (batch) => {
      appends += 1;
      await append(batch);
    };
    const recording = recorder(store, 100, 600_000);
    recording.start();
    recording.record(1);
    recording.flushSoon();
    recording.record(2);
    recording.flushSoon();
    // The flush window is 10 minutes: only the soon write can come within the wait.
    await waitFor('the soon write', () => written.length === 2);
    expect(appends).toBe(1);
    await recording.close();
  });
});
