/**
 * The recording leases (relay/coordination/recording/), run against each lease table: in memory and
 * on a private Redis. The table: one holder at a time, renewed by it alone, let go by it alone, and
 * taken by another once expired. The recording over it: of two relays serving one stream in epochs
 * of their own, only the lease holder's messages are recorded; when it lets go, or can no longer
 * renew (paused, or cut off from the table), the other records from a snapshot timed at its
 * takeover, and nothing of the first one's lies after that snapshot in `rts` order: one new epoch in
 * the record, nothing twice.
 */
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { streamKey } from '../../../packages/protocol/src/channels/stream-key.ts';
import type { RecordedMessage } from '../../../src/history/store.ts';
import { codecs } from '../../../src/relay/channels/codecs.ts';
import type { LeaseTable } from '../../../src/relay/coordination/recording/lease-table.ts';
import { RedisLeaseTable } from '../../../src/relay/coordination/recording/redis-lease-table.ts';
import { StreamRecording } from '../../../src/relay/coordination/recording/stream-recording.ts';
import { defineScripts } from '../../../src/relay/coordination/redis/scripts.ts';
import { recordedOf } from '../../../src/relay/streams/recorded.ts';
import { type AnyStream, Stream } from '../../../src/relay/streams/stream.ts';
import { answeringWhenTold, MemoryLeaseTable } from '../../support/cluster/memory-lease-table.ts';
import { redisAvailable, useRedis } from '../../support/cluster/redis.ts';
import { waitFor } from '../../support/wait-for.ts';

interface Tables {
  a: LeaseTable;
  b: LeaseTable;
  /** `a` can no longer reach the table (its connection is gone), `b` still can. */
  cut(): void;
  close(): void;
}

const redis = redisAvailable() ? useRedis() : undefined;

const implementations: [string, () => Promise<Tables>][] = [
  [
    'in memory',
    async () => {
      const a = new MemoryLeaseTable('a');
      return { a, b: a.sibling('b'), cut: () => (a.away = true), close: () => undefined };
    },
  ],
  ...(redis === undefined
    ? []
    : ([
        [
          'redis',
          async () => {
            // As the relay's commands connection: a command fails at once while Redis is out of reach.
            const options = { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: true };
            const [one, two] = [new Redis(redis.server.url, options), new Redis(redis.server.url, options)];
            for (const connection of [one, two]) defineScripts(connection);
            await Promise.all([one.connect(), two.connect()]);
            return {
              a: new RedisLeaseTable(one, 'a'),
              b: new RedisLeaseTable(two, 'b'),
              cut: () => one.disconnect(),
              close: () => {
                one.disconnect();
                two.disconnect();
              },
            };
          },
        ],
      ] satisfies [string, () => Promise<Tables>][])),
];

let streamCount = 0;
const closing: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0)) await close();
});

/** One relay serving the `rest` stream `path` in an epoch of its own, recording over `table`. */
function relayOn(table: LeaseTable, path: string, records: RecordedMessage[]) {
  const stream = new Stream({ channel: 'rest', market: path }, codecs.rest, 100);
  const served = stream as unknown as AnyStream;
  let holds = true;
  const recording = new StreamRecording({
    table,
    record: (subject, frame, kind) =>
      records.push(recordedOf(subject, { text: frame.bytes.toString(), position: frame.position }, kind)),
    holds: () => holds,
    leaseMs: 600,
    renewMs: 50,
  });
  closing.push(() => recording.close());
  let n = 0;
  return {
    epoch: () => stream.epoch,
    /** `receivedAt`: when the relay received this state (its `rts`). */
    publish(receivedAt = Date.now()) {
      n += 1;
      const now = receivedAt;
      const { frame, kind } = stream.publish(
        // A patch of one field is smaller than the whole: each change is an `update`.
        { n, venue: 'a state with more than one field' },
        new Date(now).toISOString(),
        new Date(now).toISOString(),
        now,
      );
      if (frame !== null) recording.sink(served, frame, kind);
    },
    letGo: () => {
      holds = false;
    },
  };
}

const inRtsOrder = (records: readonly RecordedMessage[]) =>
  [...records].sort((x, y) => Date.parse(x.rts) - Date.parse(y.rts) || x.seq - y.seq);

/** The epochs of `records` in `rts` order, each once per run. */
function epochRuns(records: readonly RecordedMessage[]): string[] {
  const runs: string[] = [];
  for (const record of inRtsOrder(records)) if (runs.at(-1) !== record.epoch) runs.push(record.epoch);
  return runs;
}

describe.each(implementations)('recording leases: %s', (_name, create) => {
  /** Two relays serving one stream of a new path: a records its snapshot first, then b joins. */
  async function aHoldingThenB(name: string) {
    const tables = await create();
    closing.push(tables.close);
    const path = `/${name}-${++streamCount}`;
    const records: RecordedMessage[] = [];
    const a = relayOn(tables.a, path, records);
    a.publish();
    await waitFor('a to record its snapshot', () => records.length === 1);
    return { tables, records, a, b: relayOn(tables.b, path, records) };
  }

  it('has one holder at a time, renewed and let go by it alone, taken by another once expired', async () => {
    const tables = await create();
    closing.push(tables.close);
    const key = `rest:/leases-${++streamCount}`;
    expect(await tables.a.hold(key, 300)).toBe(true);
    expect(await tables.b.hold(key, 300)).toBe(false);
    expect(await tables.a.hold(key, 300)).toBe(true);
    await tables.b.release(key); // not b's to let go
    expect(await tables.b.hold(key, 300)).toBe(false);
    await tables.a.release(key);
    expect(await tables.b.hold(key, 300)).toBe(true);
    expect(await tables.a.hold(key, 300)).toBe(false);
    await waitFor('b’s lease to expire', async () => await tables.a.hold(key, 300));
    expect(await tables.b.hold(key, 300)).toBe(false);
  });

  it('records the holder’s messages only; when it lets go, the other records on from a snapshot', async () => {
    const { records, a, b } = await aHoldingThenB('handover');
    for (let i = 0; i < 5; i += 1) {
      a.publish();
      b.publish();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(records.every((record) => record.epoch === a.epoch())).toBe(true);
    expect(records.map((record) => [record.type, record.seq])).toEqual([
      ['snapshot', 1],
      ...[2, 3, 4, 5, 6].map((seq) => ['update', seq]),
    ]);
    a.letGo();
    await waitFor('b to take over', () => records.some((record) => record.epoch === b.epoch()));
    const snapshot = records.find((record) => record.epoch === b.epoch())!;
    // b's state at its position (its first state and four changes), timed at the takeover.
    expect(snapshot).toMatchObject({ type: 'snapshot', seq: 5 });
    expect(JSON.parse(snapshot.data)).toMatchObject({ n: 5 });
    for (let i = 0; i < 3; i += 1) b.publish();
    expect(records.filter((record) => record.epoch === b.epoch()).map((record) => record.seq)).toEqual([
      5, 6, 7, 8,
    ]);
    expect(epochRuns(records)).toEqual([a.epoch(), b.epoch()]);
  });

  it('fences a holder that can no longer renew: it stops at its deadline, before the other’s snapshot', async () => {
    const { tables, records, a, b } = await aHoldingThenB('fence');
    b.publish();
    tables.cut();
    // a serves on and keeps publishing: only what it received before its own deadline is recorded.
    await waitFor(
      'b to take over',
      () => {
        a.publish();
        b.publish();
        return records.some((record) => record.epoch === b.epoch());
      },
      { everyMs: 20 },
    );
    for (let i = 0; i < 5; i += 1) {
      a.publish();
      b.publish();
    }
    const fromB = records.filter((record) => record.epoch === b.epoch());
    const fromA = records.filter((record) => record.epoch === a.epoch());
    expect(fromA.length).toBeGreaterThan(1);
    const takeover = Date.parse(fromB[0]!.rts);
    expect(fromA.every((record) => Date.parse(record.rts) < takeover)).toBe(true);
    expect(epochRuns(records)).toEqual([a.epoch(), b.epoch()]);
    expect(fromB.map((record) => record.seq)).toEqual(
      Array.from({ length: fromB.length }, (_, i) => fromB[0]!.seq + i),
    );
  });

  it('records a message received before the takeover but served after as the state then, timed at the takeover', async () => {
    const { records, a, b } = await aHoldingThenB('late');
    b.publish();
    a.letGo();
    const snapshot = await waitFor('b to take over', () =>
      records.find((record) => record.epoch === b.epoch()),
    );
    const takeover = Date.parse(snapshot.rts);
    b.publish(takeover - 200);
    b.publish();
    const fromB = records.filter((record) => record.epoch === b.epoch());
    expect(fromB.map((record) => [record.type, record.seq])).toEqual([
      ['snapshot', 1],
      ['snapshot', 2],
      ['update', 3],
    ]);
    expect(fromB[1]!.rts).toBe(snapshot.rts);
    expect(JSON.parse(fromB[1]!.data)).toMatchObject({ n: 2 });
    expect(inRtsOrder(fromB).map((record) => record.seq)).toEqual([1, 2, 3]);
  });

  it('leaves the book and price streams to their target’s lease holder, who numbers them for all', async () => {
    const tables = await create();
    closing.push(tables.close);
    const market = `3f2b8c1e-5d4a-4e6b-9c7d-${String(++streamCount).padStart(12, '0')}`;
    const path = `/numbered-${streamCount}`;
    const records: RecordedMessage[] = [];
    const recording = new StreamRecording({
      table: tables.a,
      record: (subject, frame, kind) =>
        records.push(recordedOf(subject, { text: frame.bytes.toString(), position: frame.position }, kind)),
      holds: () => true,
      leaseMs: 600,
      renewMs: 50,
    });
    closing.push(() => recording.close());
    const price = new Stream({ channel: 'price', market }, codecs.price, 100);
    const { frame, kind } = price.publish(
      { best_bid: '0.5' },
      new Date().toISOString(),
      new Date().toISOString(),
      Date.now(),
    );
    recording.sink(price as unknown as AnyStream, frame!, kind);
    // A round trip on a's table: a lease the sink had asked for would be a's by its answer.
    await tables.a.hold(`${path}-after`, 600);
    expect(records).toEqual([]);
    expect(await tables.b.hold(streamKey('price', market), 600)).toBe(true);
  });
});

describe('recording leases: a stream served again under the same key', () => {
  it('keeps the lease when the answer to the old stream’s ask comes after the new stream asked', async () => {
    const leases = new MemoryLeaseTable('a');
    const other = leases.sibling('b');
    // Each ask is done at once and answered when let through, in order, as one Redis connection does.
    const answers: (() => void)[] = [];
    const table: LeaseTable = {
      holder: 'a',
      async hold(key, ttlMs) {
        const held = await leases.hold(key, ttlMs);
        await new Promise<void>((resolve) => answers.push(resolve));
        return held;
      },
      release: (key) => leases.release(key),
    };
    const path = `/again-${++streamCount}`;
    const records: RecordedMessage[] = [];
    let current: AnyStream | undefined;
    const recording = new StreamRecording({
      table,
      record: (subject, frame, kind) =>
        records.push(recordedOf(subject, { text: frame.bytes.toString(), position: frame.position }, kind)),
      holds: (stream) => stream === current,
      leaseMs: 600,
      // No renewal within the test: each ask is the sink's own.
      renewMs: 60_000,
    });
    closing.push(() => recording.close());
    const serve = () => {
      const stream = new Stream({ channel: 'rest', market: path }, codecs.rest, 100);
      current = stream as unknown as AnyStream;
      const at = new Date().toISOString();
      const { frame, kind } = stream.publish({ venue: 'a' }, at, at, Date.now());
      recording.sink(current, frame!, kind);
      return stream;
    };
    serve();
    // The stream closed (its last subscriber left) and a new one of the same key began.
    const again = serve();
    await waitFor('both asks to be made', () => answers.length === 2);
    answers[0]!();
    await new Promise((resolve) => setImmediate(resolve));
    answers[1]!();
    await waitFor('the new stream to be recorded from a snapshot', () =>
      records.some((record) => record.epoch === again.epoch),
    );
    expect(await other.hold(streamKey('rest', path), 600)).toBe(false);
  });
});

describe('recording leases: an answer that comes after the relay’s own deadline', () => {
  it('records nothing on it: the lease it answers for may have expired and been taken meanwhile', async () => {
    const leases = new MemoryLeaseTable('a');
    let clock = Date.now();
    // The relay paused (or the reply was slow) for longer than the lease.
    const late = answeringWhenTold(leases);
    const records: RecordedMessage[] = [];
    const recording = new StreamRecording({
      table: late.table,
      record: (subject, frame, kind) =>
        records.push(recordedOf(subject, { text: frame.bytes.toString(), position: frame.position }, kind)),
      holds: () => true,
      now: () => clock,
      leaseMs: 600,
      renewMs: 60_000,
    });
    closing.push(() => recording.close());
    const stream = new Stream({ channel: 'rest', market: `/late-answer-${++streamCount}` }, codecs.rest, 100);
    const at = new Date(clock).toISOString();
    const { frame, kind } = stream.publish({ venue: 'a' }, at, at, clock);
    recording.sink(stream as unknown as AnyStream, frame!, kind);
    await waitFor('the ask to be made', () => late.asked);
    clock += 700;
    late.answer();
    await new Promise((resolve) => setImmediate(resolve));
    expect(records).toEqual([]);
  });
});
