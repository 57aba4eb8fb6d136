/**
 * Subscribers paced at an `interval` (docs/protocol.md "Per-subscription options"), on the relay's
 * clock faked: a change after a quiet interval goes out at once, changes within one are conflated
 * into one update from the state last sent to the latest when it ends (`prev_seq` naming the
 * state it applies to), nothing goes out when nothing changed; one frame serves every subscriber
 * of the same interval, and a raw subscriber still gets every update.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  applyBookUpdate,
  type BookState,
  bookChecksum,
} from '../../../packages/protocol/src/protocol/book.ts';
import type { BookData } from '../../../packages/protocol/src/protocol/messages.ts';
import { codecs } from '../../../src/relay/channels/codecs.ts';
import { RelayEvents } from '../../../src/relay/events.ts';
import type { Frame } from '../../../src/relay/streams/frame.ts';
import { StreamPublisher } from '../../../src/relay/streams/publisher.ts';
import { type AnyStream, Stream, type StreamSubscriber } from '../../../src/relay/streams/stream.ts';

const market = '11111111-1111-4111-8111-111111111111';

class Recorder implements StreamSubscriber {
  readonly frames: { frame: Frame; at: number; kind: string }[] = [];
  deliver(_stream: AnyStream, frame: Frame, kind: 'snapshot' | 'update'): void {
    this.frames.push({ frame, at: Date.now(), kind });
  }
  notify(_stream: AnyStream, frame: Frame): void {
    this.frames.push({ frame, at: Date.now(), kind: 'notice' });
  }
  ended(): void {}
  seqs(): number[] {
    return this.frames.map(({ frame }) => JSON.parse(frame.text).seq as number);
  }
}

interface PacedMessage {
  seq: number;
  prev_seq?: number;
  data: BookState;
  checksum: number;
}

const book = (size: number): BookState => ({
  bids: [['0.50000000', String(size)]],
  asks: [],
  last_price: '0.50000000',
});

describe('paced subscribers', () => {
  let stream: Stream<BookState, BookData>;
  let size = 0;
  const change = () => {
    size += 1;
    const at = new Date().toISOString();
    stream.publish(book(size), at, at, Date.now());
  };

  beforeEach(() => {
    vi.useFakeTimers();
    stream = new Stream({ channel: 'book', market, depth: 10 }, codecs.book, 64);
    size = 0;
  });
  afterEach(() => {
    stream.close('test over');
    vi.useRealTimers();
  });

  it('sends the leading change at once, then one conflated update to the latest state per interval', () => {
    const raw = new Recorder();
    const paced = new Recorder();
    for (const subscriber of [raw, paced]) stream.subscribers.add(subscriber);
    stream.subscribers.pace(paced, 1_000);
    change(); // seq 1: leading edge
    for (let i = 0; i < 9; i += 1) {
      vi.advanceTimersByTime(150);
      change(); // seq 2..10 within 1350 ms
    }
    expect(raw.seqs()).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(paced.seqs()).toEqual([1, 7]); // the trailing edge of the first interval, at 1000 ms
    vi.advanceTimersByTime(1_000);
    expect(paced.seqs()).toEqual([1, 7, 10]); // the burst's last state, no further change needed
    vi.advanceTimersByTime(5_000);
    expect(paced.seqs()).toEqual([1, 7, 10]); // nothing changed: nothing sent
    expect(paced.frames.map(({ kind }) => kind)).toEqual(['snapshot', 'update', 'update']);
    // Each conflated update names the state it applies to: the previous message's.
    const messages = paced.frames.map(({ frame }) => JSON.parse(frame.text) as PacedMessage);
    expect(messages.map((message) => message.prev_seq)).toEqual([undefined, 1, 7]);
    // Applied in turn, they rebuild the latest state, each checksum matching the state after it.
    let state = messages[0]!.data;
    for (const message of messages.slice(1)) {
      state = applyBookUpdate(state, message.data);
      expect(bookChecksum(state)).toBe(message.checksum);
    }
    expect(state).toEqual(book(10));
    const gaps = paced.frames.slice(1).map(({ at }, i) => at - paced.frames[i]!.at);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(1_000);
    // After a quiet interval, the next change goes out at once.
    const before = Date.now();
    change();
    expect(paced.frames.at(-1)).toMatchObject({ at: before });
    // One change since the group's last message: the stream's own update, the same bytes the raw
    // subscriber got (no prev_seq: it applies to seq 10), marked for the session as applying to 10.
    const last = paced.frames.at(-1)!.frame;
    expect(last.wire).toBe(raw.frames.at(-1)!.frame.wire);
    expect(last.basis).toEqual({ epoch: stream.epoch, seq: 10 });
    expect(JSON.parse(last.text)).toMatchObject({
      type: 'update',
      seq: 11,
      checksum: bookChecksum(book(11)),
    });
  });

  it('builds one frame for every subscriber of the same interval', () => {
    const [a, b, other] = [new Recorder(), new Recorder(), new Recorder()];
    for (const subscriber of [a, b, other]) stream.subscribers.add(subscriber);
    stream.subscribers.pace(a, 500);
    stream.subscribers.pace(b, 500);
    stream.subscribers.pace(other, 2_000);
    change();
    for (let i = 0; i < 5; i += 1) {
      vi.advanceTimersByTime(200);
      change();
    }
    vi.advanceTimersByTime(2_000);
    expect(a.frames.length).toBeGreaterThan(1);
    expect(a.frames.map(({ frame }) => frame)).toEqual(b.frames.map(({ frame }) => frame));
    expect(a.frames.every(({ frame }, i) => b.frames[i]!.frame === frame)).toBe(true);
    expect(other.frames.length).toBeLessThan(a.frames.length);
    expect(other.seqs().at(-1)).toBe(a.seqs().at(-1));
  });

  it('never delays status, and stops pacing a subscriber that leaves or goes raw', () => {
    const paced = new Recorder();
    stream.subscribers.add(paced);
    stream.subscribers.pace(paced, 1_000);
    expect(stream.subscribers.intervalOf(paced)).toBe(1_000);
    change();
    change();
    stream.setFreshness('stale', 'upstream down');
    expect(paced.frames.map(({ kind }) => kind)).toEqual(['snapshot', 'notice']);
    stream.subscribers.pace(paced, undefined);
    expect(stream.subscribers.intervalOf(paced)).toBeUndefined();
    change();
    expect(paced.frames.at(-1)!.kind).toBe('update');
    vi.advanceTimersByTime(2_000);
    expect(paced.seqs().at(-1)).toBe(3);
    stream.subscribers.pace(paced, 1_000);
    stream.subscribers.delete(paced);
    change();
    vi.advanceTimersByTime(2_000);
    expect(paced.seqs().at(-1)).toBe(3);
    expect(vi.getTimerCount()).toBe(0);
  });
  it('counts each change for the clients it goes to at once, and each paced snapshot for its group', () => {
    const events = new RelayEvents();
    const sent: { kind: string; subscribers: number }[] = [];
    events.on('stream:sent', ({ kind, subscribers }) => sent.push({ kind, subscribers }));
    const publisher = new StreamPublisher(events, Date.now);
    stream.onPacedSend = (of, frame, recipients) => publisher.pacedSent(of, frame, recipients);
    const [raw, pacedA, pacedB] = [new Recorder(), new Recorder(), new Recorder()];
    for (const subscriber of [raw, pacedA, pacedB]) stream.subscribers.add(subscriber);
    stream.subscribers.pace(pacedA, 1_000);
    stream.subscribers.pace(pacedB, 1_000);
    const at = new Date().toISOString();
    publisher.publish(stream, book(1), at, at, Date.now()); // first state: the group's leading edge too
    vi.advanceTimersByTime(100);
    publisher.publish(stream, book(2), at, at, Date.now()); // within the interval: owed
    vi.advanceTimersByTime(1_000);
    // The group's leading edge goes out inside the publish, before the publisher counts the change.
    expect(sent).toEqual([
      { kind: 'snapshot', subscribers: 2 },
      { kind: 'snapshot', subscribers: 1 },
      { kind: 'update', subscribers: 1 },
      { kind: 'snapshot', subscribers: 2 },
    ]);
  });
});
