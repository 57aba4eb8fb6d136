/**
 * The recording leases (relay/coordination/recording/stream-recording.ts) where the table is slow
 * or the relay stops: a sink call after `close()` takes no lease (nothing would let it go, and
 * another relay would wait out the TTL), and an ask that never answers (a silent network) does not
 * keep the relay from asking again: it records from the next answer, and the hung ask's answer, when
 * it comes at last, changes nothing: a newer answer already told more.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { streamKey } from '../../../packages/protocol/src/channels/stream-key.ts';
import type { RecordedMessage } from '../../../src/history/store.ts';
import { codecs } from '../../../src/relay/channels/codecs.ts';
import type { LeaseTable } from '../../../src/relay/coordination/recording/lease-table.ts';
import { StreamRecording } from '../../../src/relay/coordination/recording/stream-recording.ts';
import { recordedOf } from '../../../src/relay/streams/recorded.ts';
import { type AnyStream, Stream } from '../../../src/relay/streams/stream.ts';
import { answeringWhenTold, MemoryLeaseTable } from '../../support/cluster/memory-lease-table.ts';
import { waitFor } from '../../support/wait-for.ts';

const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0)) await close();
});

let streamCount = 0;

function recordingOver(table: LeaseTable, records: RecordedMessage[], renewMs: number) {
  const recording = new StreamRecording({
    table,
    record: (subject, frame, kind) =>
      records.push(recordedOf(subject, { text: frame.bytes.toString(), position: frame.position }, kind)),
    holds: () => true,
    leaseMs: 600,
    renewMs,
  });
  closing.push(() => recording.close());
  return recording;
}

function publishOn(recording: StreamRecording, stream: Stream<unknown>, n: number): void {
  const at = new Date().toISOString();
  const { frame, kind } = stream.publish(
    { n, venue: 'a state with more than one field' },
    at,
    at,
    Date.now(),
  );
  if (frame !== null) recording.sink(stream as unknown as AnyStream, frame, kind);
}

describe('recording leases: after close', () => {
  it('takes no lease on a sink call after close(): another relay takes it at once', async () => {
    const a = new MemoryLeaseTable('a');
    const b = a.sibling('b');
    const records: RecordedMessage[] = [];
    const recording = recordingOver(a, records, 50);
    const path = `/after-close-${++streamCount}`;
    const stream = new Stream({ channel: 'rest', market: path }, codecs.rest, 100);
    await recording.close();
    publishOn(recording, stream, 1);
    // A round trip on a's table: a lease the sink had asked for would be a's by its answer.
    await a.hold(`${path}-after`, 600);
    expect(await b.hold(streamKey('rest', path), 600)).toBe(true);
    expect(records).toEqual([]);
  });

  it('lets go a lease whose answer comes while it closes', async () => {
    const leases = new MemoryLeaseTable('a');
    const b = leases.sibling('b');
    const late = answeringWhenTold(leases);
    const recording = recordingOver(late.table, [], 60_000);
    const path = `/closing-${++streamCount}`;
    publishOn(recording, new Stream({ channel: 'rest', market: path }, codecs.rest, 100), 1);
    await waitFor('the ask to be made', () => late.asked);
    const closed = recording.close();
    late.answer();
    await closed;
    expect(await b.hold(streamKey('rest', path), 600)).toBe(true);
  });
});

describe('recording leases: an ask that never answers', () => {
  /** a's table, whose first `hung` asks hang until let through. */
  function hanging(hung: number) {
    const leases = new MemoryLeaseTable('a');
    const waiting: ((held: boolean) => void)[] = [];
    let asks = 0;
    const table: LeaseTable = {
      holder: 'a',
      hold(key, ttlMs) {
        asks += 1;
        // A silent network: the script never ran, no answer comes.
        if (asks <= hung) return new Promise<boolean>((resolve) => waiting.push(resolve));
        return leases.hold(key, ttlMs);
      },
      release: (key) => leases.release(key),
    };
    return { table, waiting, other: leases.sibling('b') };
  }

  it('asks again past its bound and records from the next answer', async () => {
    const { table, waiting } = hanging(1);
    const records: RecordedMessage[] = [];
    const recording = recordingOver(table, records, 50);
    const stream = new Stream({ channel: 'rest', market: `/hung-${++streamCount}` }, codecs.rest, 100);
    publishOn(recording, stream, 1);
    await waitFor('the first ask to hang', () => waiting.length === 1);
    await waitFor(
      'the relay to record after asking again',
      () => {
        publishOn(recording, stream, records.length + 2);
        return records.length >= 2;
      },
      { timeoutMs: 3_000, everyMs: 20 },
    );
    expect(records[0]).toMatchObject({ type: 'snapshot', epoch: stream.epoch });
  });

  it('changes nothing when the hung answer comes at last', async () => {
    const { table, waiting } = hanging(1);
    const records: RecordedMessage[] = [];
    const recording = recordingOver(table, records, 50);
    const stream = new Stream({ channel: 'rest', market: `/late-${++streamCount}` }, codecs.rest, 100);
    publishOn(recording, stream, 1);
    await waitFor('the first ask to hang', () => waiting.length === 1);
    await waitFor('the relay to record from a later answer', () => records.length === 1);
    // Whatever it says (here: held by another), it tells of the table before the answer recorded on.
    waiting[0]!(false);
    await new Promise((resolve) => setImmediate(resolve));
    publishOn(recording, stream, 2);
    expect(records.map((record) => [record.type, record.seq])).toEqual([
      ['snapshot', 1],
      ['update', 2],
    ]);
  });

  it('closes within its bound while an ask hangs', async () => {
    const { table, other } = hanging(Number.POSITIVE_INFINITY);
    const recording = recordingOver(table, [], 50);
    const path = `/hung-close-${++streamCount}`;
    publishOn(recording, new Stream({ channel: 'rest', market: path }, codecs.rest, 100), 1);
    const started = Date.now();
    await recording.close();
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(await other.hold(streamKey('rest', path), 600)).toBe(true);
  });
});
