import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeTextFrame, type Frame, toFrame } from '../../../src/relay/streams/frame.ts';
import { ResumeRing } from '../../../src/relay/streams/resume-ring.ts';
import { propertyRuns } from '../../support/property-runs.ts';

const LARGEST_BLOCK_BYTES = 64 * 1024;
/** What the ring keeps beside each update's wire: its length and the time it was kept. */
const HEADER_BYTES = 12;

/** A text frame of `length` payload bytes (each length class of RFC 6455: 7, 16 and 64 bits). */
function wireOf(length: number, fill: number): Buffer {
  return encodeTextFrame(String.fromCharCode(0x61 + (fill % 26)).repeat(length)).wire;
}

type Step =
  | { kind: 'next'; length: number }
  | { kind: 'jump'; by: number; length: number }
  | { kind: 'clear' };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 12, arbitrary: fc.record({ kind: fc.constant('next' as const), length: fc.nat(3_000) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('jump' as const),
      by: fc.integer({ min: 2, max: 5 }),
      length: fc.nat(70_000),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'clear' as const }) },
);

describe('ResumeRing', () => {
  it('gives back exactly the updates a plain list of the last `capacity` within `maxBytes` would, in bounded memory', () => {
    const bounds = fc.tuple(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1_024, max: 200_000 }));
    fc.assert(
      fc.property(bounds, fc.array(step, { maxLength: 300 }), ([capacity, maxBytes], steps) => {
        const ring = new ResumeRing(capacity, maxBytes);
        let held: { seq: number; wire: Buffer }[] = [];
        let seq = 0;
        let largest = 0;
        for (const [index, next] of steps.entries()) {
          if (next.kind === 'clear') {
            ring.clear();
            held = [];
            continue;
          }
          seq += next.kind === 'jump' ? next.by : 1;
          const wire = wireOf(next.length, index);
          largest = Math.max(largest, wire.length + HEADER_BYTES);
          ring.push(seq, wire);
          // A jump starts over: the ones before can no longer lead up to it.
          if (next.kind === 'jump') held = [];
          // One larger than the bound on its own starts the ring over, without it.
          if (wire.length + HEADER_BYTES > maxBytes) held = [];
          else held.push({ seq, wire });
          const bytesOf = (list: typeof held) =>
            list.reduce((sum, update) => sum + update.wire.length + HEADER_BYTES, 0);
          while (held.length > capacity || bytesOf(held) > maxBytes) held.shift();

          expect(ring.size).toBe(held.length);
          const heldBytes = bytesOf(held);
          expect(ring.heldBytes).toBe(heldBytes);
          if (held.length === 0) {
            expect(ring.framesAfter(seq - 1, 'e')).toBeUndefined();
            continue;
          }
          expect(ring.retainedBytes).toBeLessThanOrEqual(
            heldBytes + 3 * Math.max(LARGEST_BLOCK_BYTES, largest),
          );
          const oldest = held[0]!.seq;
          for (const after of [oldest - 2, oldest - 1, oldest, seq - 1, seq, seq + 1]) {
            const frames = ring.framesAfter(after, 'e');
            if (after < oldest - 1 || after > seq) {
              expect(frames).toBeUndefined();
              continue;
            }
            const expected = held.filter((update) => update.seq > after);
            expect(frames?.map((frame) => frame.position)).toEqual(
              expected.map((update) => ({ epoch: 'e', seq: update.seq })),
            );
            // Buffer.equals, not a deep comparison byte by byte: the frames run to 70 kB.
            const same = frames?.every((frame, i) => frame.wire.equals(expected[i]!.wire));
            expect(same).toBe(true);
          }
        }
      }),
      { numRuns: propertyRuns(150) },
    );
  });

  it('holds updates of 3 MB within its byte bound, whatever their count', () => {
    const maxBytes = 8 * 1024 * 1024;
    const ring = new ResumeRing(1_000, maxBytes);
    const wire = wireOf(3 * 1024 * 1024, 0);
    for (let seq = 1; seq <= 20; seq++) {
      ring.push(seq, wire);
      expect(ring.retainedBytes).toBeLessThanOrEqual(maxBytes);
    }
    expect(ring.size).toBe(2);
    expect(ring.framesAfter(18, 'e')?.map((frame) => frame.position?.seq)).toEqual([19, 20]);
  });

  it('keeps a few kilobytes for a small ring however many updates went through it', () => {
    const ring = new ResumeRing(10);
    const wire = wireOf(100, 0);
    for (let seq = 1; seq <= 100_000; seq++) ring.push(seq, wire);
    expect(ring.size).toBe(10);
    expect(ring.retainedBytes).toBeLessThanOrEqual(4 * 1024);
  });

  it('gives frames that serve as the frames pushed, in every encoding', () => {
    const ring = new ResumeRing(5);
    const sent: Frame[] = [];
    for (const seq of [1, 2, 3]) {
      const frame = toFrame({
        type: 'update',
        channel: 'book',
        market: '3f0c5a4e-8b7d-4c1a-9e2f-1a2b3c4d5e6f',
        epoch: 'e',
        seq,
        ts: '2026-01-01T00:00:00.100Z',
        rts: '2026-01-01T00:00:00.350Z',
        depth: 10,
        data: { bids: [[`0.7${seq}000000`, '120.5']], asks: [['0.80000000', '0']] },
        checksum: seq,
      });
      sent.push(frame);
      ring.push(seq, frame.wire);
    }
    const replayed = ring.framesAfter(1, 'e')!;
    expect(replayed.map((frame) => frame.text)).toEqual(sent.slice(1).map((frame) => frame.text));
    expect(replayed.map((frame) => frame.deflate())).toEqual(sent.slice(1).map((frame) => frame.deflate()));
    expect(replayed.map((frame) => frame.sseData)).toEqual(sent.slice(1).map((frame) => frame.sseData));
    expect(replayed.map((frame) => frame.compactWire(7))).toEqual(
      sent.slice(1).map((frame) => frame.compactWire(7)),
    );
  });

  it('resumes from no update older than its age bound, and lets such updates go with the next push', () => {
    let now = 0;
    const ring = new ResumeRing(1_000, 1024 * 1024, 60_000, () => now);
    const wire = wireOf(200, 0);
    for (let seq = 1; seq <= 10; seq++) {
      ring.push(seq, wire);
      now += 10_000; // updates at 0, 10 s, ..., 90 s
    }
    // At 100 s the updates of 0 to 30 s are past the 60 s bound: resuming from before 40 s fails.
    expect(ring.framesAfter(3, 'e')).toBeUndefined();
    expect(ring.framesAfter(4, 'e')?.map((frame) => frame.position?.seq)).toEqual([5, 6, 7, 8, 9, 10]);
    now += 600_000;
    ring.push(11, wire);
    expect(ring.size).toBe(1);
    expect(ring.retainedBytes).toBeLessThanOrEqual(4 * 1024);
    expect(ring.framesAfter(10, 'e')?.map((frame) => frame.position?.seq)).toEqual([11]);
  });

  it('rejects a capacity that is not a positive integer', () => {
    expect(() => new ResumeRing(0)).toThrow(RangeError);
  });
});
