import { constants, inflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { BookState } from '../../../packages/protocol/src/protocol/book.ts';
import type { BookData } from '../../../packages/protocol/src/protocol/messages.ts';
import { codecs } from '../../../src/relay/channels/codecs.ts';
import { type Frame, toFrame } from '../../../src/relay/streams/frame.ts';
import {
  type AnyStream,
  Stream,
  type StreamOf,
  type StreamSubscriber,
} from '../../../src/relay/streams/stream.ts';

const market = '11111111-1111-4111-8111-111111111111';

class Recorder implements StreamSubscriber {
  readonly messages: Record<string, unknown>[] = [];
  endedCount = 0;
  deliver(_stream: AnyStream, frame: Frame): void {
    this.messages.push(JSON.parse(frame.text));
  }
  notify(_stream: AnyStream, frame: Frame): void {
    this.messages.push(JSON.parse(frame.text));
  }
  ended(): void {
    this.endedCount += 1;
  }
}

function book(bids: [string, string][], lastPrice = '0.50000000'): BookState {
  return { bids, asks: [['0.60000000', '5']], last_price: lastPrice };
}

function newStream(ring = 3): Stream<BookState, BookData> {
  return new Stream({ channel: 'book', market, depth: 10 }, codecs.book, ring);
}

describe('Stream', () => {
  it('sends the first state as a snapshot with seq 1, then updates with contiguous seq', () => {
    const stream = newStream();
    const client = new Recorder();
    stream.subscribers.add(client);
    stream.publish(book([['0.50000000', '1']]), '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.010Z', 1);
    stream.publish(book([['0.50000000', '2']]), '2026-01-01T00:00:01.000Z', '2026-01-01T00:00:01.010Z', 2);
    stream.publish(book([['0.50000000', '2']]), '2026-01-01T00:00:01.000Z', '2026-01-01T00:00:02.010Z', 3);
    stream.publish(book([['0.51000000', '1']]), '2026-01-01T00:00:03.000Z', '2026-01-01T00:00:03.010Z', 4);
    expect(client.messages.map((m) => [m.type, m.seq])).toEqual([
      ['snapshot', 1],
      ['update', 2],
      ['update', 3],
    ]);
    expect(client.messages[1]).toMatchObject({
      channel: 'book',
      market,
      depth: 10,
      epoch: stream.epoch,
      ts: '2026-01-01T00:00:01.000Z',
      rts: '2026-01-01T00:00:01.010Z',
      data: { bids: [['0.50000000', '2']], asks: [] },
    });
    expect(client.messages[2]?.data).toEqual({
      bids: [
        ['0.51000000', '1'],
        ['0.50000000', '0'],
      ],
      asks: [],
    });
    expect(typeof client.messages[2]?.checksum).toBe('number');
  });

  it('keeps the times of the record it shows: a snapshot of a seq equals its update but for the type', () => {
    const stream = newStream();
    const client = new Recorder();
    stream.subscribers.add(client);
    stream.publish(book([['0.50000000', '1']]), '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.010Z', 1);
    stream.publish(book([['0.50000000', '2']]), '2026-01-01T00:00:01.000Z', '2026-01-01T00:00:01.010Z', 2);
    // Later polls that changed nothing (one of them an older record) carry other times.
    stream.publish(book([['0.50000000', '2']]), '2026-01-01T00:00:05.000Z', '2026-01-01T00:00:05.010Z', 3);
    stream.publish(book([['0.50000000', '2']]), '2025-12-31T23:59:59.000Z', '2026-01-01T00:00:06.010Z', 4);
    const update = client.messages.at(-1)!;
    const snapshot = JSON.parse(stream.snapshotFrame().text) as Record<string, unknown>;
    expect(snapshot).toMatchObject({ type: 'snapshot', seq: update.seq, ts: update.ts, rts: update.rts });
    const { type: _update, data: _delta, ...updateEnvelope } = update;
    const { type: _snapshot, data: _state, ...snapshotEnvelope } = snapshot;
    expect(snapshotEnvelope).toEqual(updateEnvelope);
    expect(stream.lastSuccessAt).toBe(4);
  });

  it('replays the updates after a seq it still holds, and refuses otherwise', () => {
    const stream = newStream(2);
    for (let i = 1; i <= 5; i++)
      stream.publish(
        book([['0.50000000', String(i)]]),
        '2026-01-01T00:00:00.000Z',
        '2026-01-01T00:00:00.000Z',
        i,
      );
    expect(stream.seq).toBe(5);
    expect(stream.updatesSince(stream.epoch, 5)).toEqual([]);
    expect(stream.updatesSince(stream.epoch, 4)?.map((f) => JSON.parse(f.text).seq)).toEqual([5]);
    expect(stream.updatesSince(stream.epoch, 3)?.map((f) => JSON.parse(f.text).seq)).toEqual([4, 5]);
    expect(stream.updatesSince(stream.epoch, 2)).toBeUndefined(); // update 3 left the ring
    expect(stream.updatesSince(stream.epoch, 6)).toBeUndefined(); // ahead of the stream
    expect(stream.updatesSince('other-epoch', 4)).toBeUndefined();
  });

  it('gives each stream its own epoch', () => {
    expect(newStream().epoch).not.toBe(newStream().epoch);
  });

  it('reports stale (and upstream_unavailable before any state) and live once each, then unknown_market', () => {
    const stream = newStream();
    const client = new Recorder();
    stream.subscribers.add(client);
    expect(stream.setFreshness('stale', 'GET /clob/orderbook: timeout')).toBe(true);
    expect(stream.setFreshness('stale')).toBe(false);
    expect(stream.setFreshness('live')).toBe(true);
    stream.close('market not found upstream');
    expect(client.messages).toEqual([
      {
        type: 'status',
        channel: 'book',
        market,
        depth: 10,
        state: 'stale',
        reason: 'GET /clob/orderbook: timeout',
      },
      // Never served at all: the subscriber is also told why, as an error.
      expect.objectContaining({ type: 'error', code: 'upstream_unavailable', market }),
      { type: 'status', channel: 'book', market, depth: 10, state: 'live' },
      expect.objectContaining({ type: 'error', code: 'unknown_market', channel: 'book', market }),
    ]);
    expect(client.endedCount).toBe(1);
  });

  it('ends a stream that had data with status closed', () => {
    const stream = newStream();
    const client = new Recorder();
    stream.subscribers.add(client);
    stream.publish(book([['0.50000000', '1']]), '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', 1);
    stream.close('market not found upstream');
    expect(client.messages.at(-1)).toEqual({
      type: 'status',
      channel: 'book',
      market,
      depth: 10,
      state: 'closed',
      reason: 'market not found upstream',
    });
  });
});

describe('publish', () => {
  it('takes only the state type of the stream it publishes to (checked by the type checker)', () => {
    const books: StreamOf<'book'> = new Stream({ channel: 'book', market, depth: null }, codecs.book, 3);
    const prices: StreamOf<'price'> = new Stream({ channel: 'price', market }, codecs.price, 3);
    expect(books.publish(book([['0.50000000', '1']]), 't', 'r', 1).seq).toBe(1);
    expect(prices.publish({ best_bid: '0.50000000' }, 't', 'r', 1).seq).toBe(1);
    // Only compiled, never run: the type checker must reject it.
    const mismatched = () =>
      // @ts-expect-error: a price state cannot go to a book stream
      books.publish({ best_bid: '0.5' }, 't', 'r', 2);
    expect(mismatched).toBeTypeOf('function');
    // @ts-expect-error: a price stream is not a book stream
    const wrongChannel: StreamOf<'book'> = prices;
    expect(wrongChannel.channel).toBe('price');
  });
});

describe('Stream, subscribers that compress', () => {
  /** A subscriber whose transport compresses (or not): what it was handed, as the frame stood then. */
  class Compressing extends Recorder {
    readonly deflatedWhenHanded: (Buffer | undefined)[] = [];
    constructor(readonly deflates: boolean) {
      super();
    }
    override deliver(stream: AnyStream, frame: Frame): void {
      this.deflatedWhenHanded.push(frame.deflated);
      super.deliver(stream, frame);
    }
  }

  it('deflates each message once before handing it down while a subscriber compresses, and only then', () => {
    const stream = newStream();
    const plain = new Compressing(false);
    const compressing = new Compressing(true);
    stream.subscribers.add(plain);
    stream.publish(book([['0.50000000', '1']]), 't', 'r', 1);
    stream.subscribers.add(compressing);
    stream.subscribers.add(compressing); // counted once
    stream.publish(book([['0.50000000', '2']]), 't', 'r', 2);
    stream.subscribers.delete(compressing);
    stream.publish(book([['0.50000000', '3']]), 't', 'r', 3);
    expect(plain.deflatedWhenHanded.map((deflated) => deflated !== undefined)).toEqual([false, true, false]);
    const [deflated] = compressing.deflatedWhenHanded;
    // The one compressed frame: RSV1 set, the payload the same message once inflated (RFC 7692).
    expect(deflated?.[0]).toBe(0xc1);
    const payload = deflated!.subarray((deflated![1]! & 0x7f) < 126 ? 2 : 4);
    const text = inflateRawSync(Buffer.concat([payload, Buffer.from([0, 0, 0xff, 0xff])]), {
      finishFlush: constants.Z_SYNC_FLUSH,
    }).toString();
    expect(JSON.parse(text)).toEqual(plain.messages[1]);
    expect(stream.subscribers.deflating).toBe(0);
  });
});

describe('Stream numbered by the cluster (lease holder)', () => {
  const frameOf = (seq: number) => toFrame({ type: 'pong', ts: String(seq) });

  it("takes the holder's updates as they are, and resumes from them", () => {
    const stream = newStream(5);
    const recorder = new Recorder();
    stream.subscribers.add(recorder);
    stream.reset({ epoch: 'cluster', seq: 7 }, book([['0.40000000', '1']]), 't', 'r', 1);
    expect(recorder.messages).toMatchObject([{ type: 'snapshot', epoch: 'cluster', seq: 7 }]);
    stream.advance(
      [
        { seq: 8, frame: frameOf(8) },
        { seq: 9, frame: frameOf(9) },
      ],
      book([]),
      't2',
      'r2',
      2,
    );
    expect(stream.seq).toBe(9);
    expect(stream.epoch).toBe('cluster');
    expect(recorder.messages.slice(1)).toEqual([
      { type: 'pong', ts: '8' },
      { type: 'pong', ts: '9' },
    ]);
    expect(stream.updatesSince('cluster', 7)?.map((frame) => frame.text)).toEqual([
      frameOf(8).text,
      frameOf(9).text,
    ]);
    expect(stream.updatesSince('other', 7)).toBeUndefined();
    const tsBefore = stream.ts;
    stream.confirm('r3', 3);
    // Confirmed, not changed: the state keeps the times of the record it shows.
    expect(stream.ts).toBe(tsBefore);
    expect(stream.lastSuccessAt).toBe(3);
    expect(stream.seq).toBe(9);
  });

  it('restores its ring with a reset and forks into an epoch of its own', () => {
    const stream = newStream(5);
    stream.reset({ epoch: 'cluster', seq: 3 }, book([]), 't', 'r', 1, [
      { seq: 2, frame: frameOf(2) },
      { seq: 3, frame: frameOf(3) },
    ]);
    expect(stream.updatesSince('cluster', 1)).toHaveLength(2);
    stream.fork();
    expect(stream.hasState).toBe(false);
    expect(stream.epoch).not.toBe('cluster');
    expect(stream.publish(book([]), 't', 'r', 2).seq).toBe(1); // a snapshot in its own epoch
  });
});

describe('Stream.announceConfirmation', () => {
  const t = (second: number) => `2026-01-01T00:00:0${second}.000Z`;

  it('sends one `confirmed` per new confirmation of an unchanged state, none without one', () => {
    const stream = newStream();
    const client = new Recorder();
    stream.subscribers.add(client);
    expect(stream.announceConfirmation()).toBe(false); // no state yet
    stream.publish(book([['0.50000000', '1']]), t(0), t(0), 0);
    expect(stream.announceConfirmation()).toBe(false); // the snapshot's rts said it
    stream.publish(book([['0.50000000', '1']]), t(1), t(1), 1000);
    stream.confirm(t(2), 2000);
    expect(stream.announceConfirmation()).toBe(true);
    expect(stream.announceConfirmation()).toBe(false); // nothing new from upstream
    expect(client.messages.at(-1)).toEqual({
      type: 'confirmed',
      channel: 'book',
      market,
      depth: 10,
      epoch: stream.epoch,
      seq: 1,
      confirmed: t(2),
    });
    stream.publish(book([['0.50000000', '2']]), t(3), t(3), 3000);
    expect(stream.announceConfirmation()).toBe(false); // the update's rts said it
    expect(client.messages.map((m) => m.type)).toEqual(['snapshot', 'confirmed', 'update']);
  });

  it('says nothing while stale, and again once upstream confirms', () => {
    const stream = newStream();
    stream.subscribers.add(new Recorder());
    stream.publish(book([['0.50000000', '1']]), t(0), t(0), 0);
    stream.setFreshness('stale', 'upstream error');
    expect(stream.announceConfirmation()).toBe(false);
    stream.publish(book([['0.50000000', '1']]), t(1), t(1), 1000);
    stream.setFreshness('live');
    expect(stream.announceConfirmation()).toBe(true);
  });
});
