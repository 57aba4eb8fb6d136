/**
 * A full disk under the embedded store: writes fail and are counted, nothing throws at the sender,
 * and recording resumes by itself once space returns, with what was written before intact. Runs on
 * a small tmpfs mounted for the test (root only); where mounting is not permitted it is skipped with
 * a line saying so.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDuckDbStore } from '../../src/history/duckdb-store.ts';
import { HistoryRecorder, listBuffer } from '../../src/history/recorder.ts';
import type { RecordedMessage } from '../../src/history/store.ts';

const mountPoint = mkdtempSync(path.join(tmpdir(), 'history-full-'));
const mounted = tryMount(mountPoint);
if (!mounted)
  console.log(
    'disk-full test skipped: mounting a 4 MiB tmpfs needs root (mount -t tmpfs); run the suite as root to include it',
  );

afterAll(() => {
  if (mounted) execFileSync('umount', [mountPoint]);
  rmSync(mountPoint, { recursive: true, force: true });
});

function tryMount(target: string): boolean {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', target], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const T0 = Date.parse('2026-12-01T10:00:00.000Z');

function message(seq: number): RecordedMessage {
  return {
    channel: 'book',
    stream: 'book:m:full',
    market: 'm',
    depth: null,
    epoch: 'e',
    seq,
    ts: new Date(T0 + seq).toISOString(),
    rts: new Date(T0 + seq).toISOString(),
    type: 'update',
    // Incompressible enough that a batch needs real space in the write-ahead log.
    data: JSON.stringify({ bids: [[`0.${seq}`, Math.random().toString(36).repeat(8)]] }),
    checksum: seq,
  };
}

describe.skipIf(!mounted)('the embedded store on a full disk', () => {
  it('counts failed writes, keeps taking messages, and records again when space returns', async () => {
    const store = await openDuckDbStore(path.join(mountPoint, 'data'));
    const recorder = new HistoryRecorder<RecordedMessage>({
      store,
      buffer: listBuffer((item: RecordedMessage) => item),
      flushMs: 60_000,
      retention: { maxAgeMs: 86_400_000, maxBytes: 1024 ** 3 },
      retentionMs: 60_000,
      maxPending: 100_000,
      statsMs: 60_000,
    });
    let seq = 0;
    const batch = (count: number) => {
      for (let i = 0; i < count; i += 1) recorder.record(message(++seq));
    };
    batch(100);
    await recorder.flush();
    expect(recorder.stats()).toMatchObject({ written: 100, failing: false });

    const filler = path.join(mountPoint, 'filler');
    try {
      writeFileSync(filler, Buffer.alloc(8 * 1024 ** 2));
    } catch {
      // The filler takes every byte it can get: the disk is full now.
    }
    batch(2_000);
    await recorder.flush();
    batch(2_000);
    await recorder.flush();
    expect(recorder.stats()).toMatchObject({ failing: true, written: 100, dropped: 4_000 });
    expect(recorder.stats().writeFailures).toBeGreaterThanOrEqual(2);
    expect(recorder.stats().lastError).toMatch(/space/i);

    rmSync(filler);
    const resumedFrom = seq + 1;
    batch(50);
    await recorder.flush();
    expect(recorder.stats()).toMatchObject({ failing: false, written: 150 });
    const seqs: number[] = [];
    for await (const row of store.read({ stream: 'book:m:full', from: T0, to: T0 + 1_000_000 }))
      seqs.push(row.seq);
    // What was written before is intact, nothing of the failed batches is there, and the new rows follow.
    expect(seqs.length).toBe(150);
    expect(seqs.slice(0, 100)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    expect(seqs.slice(100)).toEqual(Array.from({ length: 50 }, (_, i) => resumedFrom + i));
    await recorder.close();
  });
});
