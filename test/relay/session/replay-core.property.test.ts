/**
 * The pure core of `replay` (src/relay/session/replay/) and its request's schema: the merge of several streams' reads in
 * `rts` order, the holes read from the record (an epoch that changes, a `seq` skipped, a stream
 * starting inside the range, a stream with nothing in it), and the plan of a request against the
 * clock and the retention.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { clientRequest, withStreamIds } from '../../../packages/protocol/src/protocol/requests.ts';
import type { RecordedMessage } from '../../../src/history/store.ts';
import { GapFinder } from '../../../src/relay/session/replay/gaps.ts';
import { mergeByRts, type TimedRecord } from '../../../src/relay/session/replay/merge.ts';
import { planReplay } from '../../../src/relay/session/replay/replay-plan.ts';
import { propertyRuns } from '../../support/property-runs.ts';

const T0 = Date.parse('2026-12-01T10:00:00.000Z');
const A = '6f1c2a3e-0000-4000-8000-00000000000a';
const B = '6f1c2a3e-0000-4000-8000-00000000000b';

function record(
  market: string,
  seq: number,
  at: number,
  overrides: Partial<RecordedMessage> = {},
): RecordedMessage {
  return {
    channel: 'book',
    stream: `book:${market}:full`,
    market,
    depth: null,
    epoch: 'e1',
    seq,
    ts: new Date(at).toISOString(),
    rts: new Date(at).toISOString(),
    type: 'update',
    data: '{}',
    checksum: undefined,
    ...overrides,
  };
}

async function* read(records: readonly RecordedMessage[]): AsyncGenerator<TimedRecord> {
  for (const next of records) yield { record: next, rts: Date.parse(next.rts) };
}

describe('mergeByRts', () => {
  it('gives every record of every stream once, in rts order, each stream in its own order', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(fc.nat(10_000), { maxLength: 30 }), { minLength: 1, maxLength: 5 }),
        async (offsets) => {
          const streams = offsets.map((times, s) =>
            [...times].sort((x, y) => x - y).map((t, i) => record(`m${s}`, i + 1, T0 + t)),
          );
          const merged: RecordedMessage[] = [];
          for await (const { record: next } of mergeByRts(streams.map(read))) merged.push(next);
          expect(merged).toHaveLength(streams.flat().length);
          const times = merged.map((next) => Date.parse(next.rts));
          expect(times).toEqual([...times].sort((x, y) => x - y));
          for (const [s, stream] of streams.entries())
            expect(merged.filter((next) => next.market === `m${s}`)).toEqual(stream);
        },
      ),
      { numRuns: propertyRuns(200) },
    );
  });

  it('ends every read when it is ended early', async () => {
    const ended: number[] = [];
    const tracked = (n: number) =>
      (async function* () {
        try {
          yield* read([record(A, 1, T0 + n), record(A, 2, T0 + n + 10)]);
        } finally {
          ended.push(n);
        }
      })();
    for await (const _ of mergeByRts([tracked(1), tracked(2)])) break;
    expect(ended.sort()).toEqual([1, 2]);
  });
});

describe('GapFinder', () => {
  it('marks an epoch change, a skipped seq, a stream starting inside the range and a stream not seen', () => {
    const finder = new GapFinder(T0, T0 + 10_000);
    const seen = [
      // A's state at the range's start, timed at the start.
      record(A, 5, T0, { type: 'snapshot' }),
      record(A, 6, T0 + 200),
      record(A, 9, T0 + 300),
      record(A, 1, T0 + 900, { epoch: 'e2', type: 'snapshot' }),
      record(A, 2, T0 + 950, { epoch: 'e2' }),
      record(B, 1, T0 + 400, { type: 'snapshot' }),
      // A stream with no state at the start begins at its first snapshot, whatever its seq.
      record('c', 40, T0 + 500, { stream: 'book:c:full', type: 'snapshot' }),
    ].map((next) => finder.before(next, Date.parse(next.rts)));
    expect(seen).toEqual([
      undefined,
      undefined,
      { market: A, from: T0 + 200, to: T0 + 300 },
      { market: A, from: T0 + 300, to: T0 + 900, reason: 'epoch_changed' },
      undefined,
      { market: B, from: T0, to: T0 + 400 },
      { market: 'c', from: T0, to: T0 + 500 },
    ]);
    const C = '6f1c2a3e-0000-4000-8000-00000000000c';
    expect(finder.unseen([A, B, C].map((market) => ({ market, key: `book:${market}:full` })))).toEqual([
      { market: C, from: T0, to: T0 + 10_000 },
    ]);
  });

  it('marks nothing in a contiguous stream, whatever its spacing', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(60_000), { minLength: 1, maxLength: 50 }), (steps) => {
        const finder = new GapFinder(T0, T0 + 10_000_000);
        let at = T0;
        for (const [i, step] of steps.entries()) {
          if (i > 0) at += step;
          expect(finder.before(record(A, i + 7, at), at)).toBeUndefined();
        }
      }),
      { numRuns: propertyRuns(200) },
    );
  });
});

describe('planReplay', () => {
  const now = T0 + 3_600_000;
  const request = {
    op: 'replay' as const,
    id: 7,
    channel: 'book',
    markets: [A, A, B],
    from: new Date(T0).toISOString(),
  };

  it('reads the range up to now, once per market, at speed 1 by default', () => {
    const planned = planReplay(
      { ...request, to: new Date(now + 60_000).toISOString(), depth: 5 },
      now,
      86_400_000,
    );
    expect(planned).toEqual({
      ok: true,
      plan: {
        id: 7,
        channel: 'book',
        streams: [
          { market: A, key: `book:${A}:5` },
          { market: B, key: `book:${B}:5` },
        ],
        from: T0,
        to: now,
        speed: 1,
      },
    });
  });

  it('refuses what it cannot serve, each with its code', () => {
    const refused = (
      asked: Partial<typeof request> & { to?: string },
      retention: number | null = 86_400_000,
    ) => {
      const planned = planReplay({ ...request, ...asked }, now, retention ?? undefined);
      return planned.ok ? 'ok' : planned.code;
    };
    expect(refused({ channel: 'nonsense' })).toBe('unknown_channel');
    expect(refused({ to: new Date(T0 - 1).toISOString() })).toBe('bad_request');
    expect(refused({ to: new Date(T0).toISOString() })).toBe('bad_request');
    expect(refused({}, 60_000)).toBe('ok');
    expect(refused({ to: new Date(T0 + 1_000).toISOString() }, 60_000)).toBe('out_of_retention');
    // null: the relay records nothing.
    expect(refused({}, null)).toBe('out_of_retention');
  });
});

describe('the replay request schema', () => {
  const parse = (frame: object) => clientRequest.safeParse(withStreamIds(frame));
  const from = '2026-12-01T10:00:00Z';

  it('reads stream ids as subscribe does: one spelling, `rest` in `paths`', () => {
    const upper = parse({
      op: 'replay',
      id: 'r',
      channel: 'book',
      markets: [A.toUpperCase()],
      from,
      speed: 'max',
    });
    expect(upper.data).toEqual({ op: 'replay', id: 'r', channel: 'book', markets: [A], from, speed: 'max' });
    const rest = parse({ op: 'replay', id: 1, channel: 'rest', paths: ['/api/markets?limit=5'], from });
    expect(rest.success).toBe(true);
    expect(rest.data).toMatchObject({ channel: 'rest', markets: [expect.stringMatching(/^\/api\/markets/)] });
  });

  it('refuses a missing id, a time without zone and a speed that is not above 0 or "max"', () => {
    const base = { op: 'replay', id: 'r', channel: 'book', markets: [A], from };
    for (const bad of [
      { ...base, id: undefined },
      { ...base, from: '2026-12-01' },
      { ...base, to: 'now' },
      { ...base, speed: 0 },
      { ...base, speed: -1 },
      { ...base, speed: 'fast' },
      { ...base, speed: Number.POSITIVE_INFINITY },
      { op: 'replay_stop' },
    ])
      expect(parse(bad).success, JSON.stringify(bad)).toBe(false);
    expect(parse({ ...base, speed: 0.5, to: '2026-12-01T11:00:00+02:00' }).success).toBe(true);
  });
});
