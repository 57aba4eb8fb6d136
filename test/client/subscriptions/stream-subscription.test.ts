/**
 * One stream's state machine (client/stream) without a relay: snapshot + updates, and the resync
 * it asks for on a gap, a checksum mismatch or another epoch; plus the frame reader's refusals.
 */
import { describe, expect, it } from 'vitest';
import { decodeFrame } from '../../../packages/client/src/connection/frames.ts';
import {
  type BookSnapshotMessage,
  BookSubscription,
  type BookUpdateMessage,
} from '../../../packages/client/src/subscriptions/channels/book/subscription.ts';
import { PriceSubscription } from '../../../packages/client/src/subscriptions/channels/price/subscription.ts';
import type {
  ResyncReason,
  StreamHost,
  SubscriptionStatus,
} from '../../../packages/client/src/subscriptions/stream-subscription.ts';
import {
  applyBookUpdate,
  type BookState,
  bookChecksum,
} from '../../../packages/protocol/src/protocol/book.ts';
import type { BookData } from '../../../packages/protocol/src/protocol/messages.ts';

const market = '3f2b8c1e-5d4a-4e6b-9c7d-1a2b3c4d5e6f';
const stamp = { ts: '2025-06-01T12:00:00.000Z', rts: '2025-06-01T12:00:00.050Z' };
const first: BookState = {
  bids: [
    ['0.52000000', '150'],
    ['0.51000000', '20.5'],
  ],
  asks: [
    ['0.53000000', '75.25'],
    ['0.54000000', '10'],
  ],
  last_price: '0.52000000',
};

function snapshot(data: BookState, epoch = 'e1', seq = 41): BookSnapshotMessage {
  return {
    type: 'snapshot',
    channel: 'book',
    market,
    depth: null,
    epoch,
    seq,
    ...stamp,
    data,
    checksum: bookChecksum(data),
  };
}

function update(after: BookState, data: BookData, seq: number, epoch = 'e1'): BookUpdateMessage {
  const checksum = bookChecksum(applyBookUpdate(after, data));
  return { type: 'update', channel: 'book', market, depth: null, epoch, seq, ...stamp, data, checksum };
}

function bookStream() {
  const requested: string[] = [];
  const host: StreamHost = {
    requestSnapshot: (ref) => requested.push(`${ref.channel}:${ref.market}:${ref.depth}`),
    release: () => undefined,
    reportListenerError: (error) => {
      throw error;
    },
  };
  const stream = new BookSubscription(host, market, null);
  const resyncs: ResyncReason[] = [];
  const statuses: SubscriptionStatus[] = [];
  stream.on('resync', ({ reason }) => resyncs.push(reason));
  stream.on('status', ({ status }) => statuses.push(status));
  return { stream, requested, resyncs, statuses };
}

const change: BookData = {
  bids: [
    ['0.51000000', '0'],
    ['0.50000000', '12'],
  ],
  asks: [],
  last_price: '0.53000000',
};

describe('book stream', () => {
  it('builds the state from snapshot + updates and goes live', () => {
    const { stream, statuses, resyncs } = bookStream();
    expect(stream.status).toBe('pending');
    stream.receive(snapshot(first));
    stream.receive(update(first, change, 42));
    expect(stream.state).toEqual({
      bids: [
        ['0.52000000', '150'],
        ['0.50000000', '12'],
      ],
      asks: first.asks,
      last_price: '0.53000000',
    });
    expect([stream.epoch, stream.seq]).toEqual(['e1', 42]);
    expect(statuses).toEqual(['live']);
    expect(resyncs).toEqual([]);
  });

  it('on a seq gap keeps the last verified state, asks for a snapshot and drops updates until it comes', () => {
    const { stream, requested, resyncs, statuses } = bookStream();
    stream.receive(snapshot(first));
    stream.receive(update(first, change, 43));
    expect(resyncs).toEqual(['gap']);
    expect(requested).toEqual([`book:${market}:null`]);
    expect(stream.state).toBe(first);
    expect(stream.status).toBe('resyncing');
    expect(stream.resumePoint).toBeUndefined();
    stream.receive(update(first, change, 42));
    expect(stream.seq).toBe(41);
    const fresh = applyBookUpdate(first, change);
    stream.receive(snapshot(fresh, 'e1', 50));
    expect(stream.state).toEqual(fresh);
    expect(statuses).toEqual(['live', 'resyncing', 'live']);
  });

  it('resyncs on a checksum mismatch without taking the unverified state', () => {
    const { stream, resyncs } = bookStream();
    stream.receive(snapshot(first));
    stream.receive({ ...update(first, change, 42), checksum: 12345 });
    expect(resyncs).toEqual(['checksum']);
    expect(stream.state).toBe(first);
  });

  it('resyncs on an update from another epoch; a snapshot in a new epoch is reported as an epoch resync', () => {
    const { stream, resyncs } = bookStream();
    stream.receive(snapshot(first));
    stream.receive(update(first, change, 42, 'e2'));
    expect(resyncs).toEqual(['epoch']);
    stream.receive(snapshot(first, 'e2', 1));
    expect(resyncs).toEqual(['epoch']);
    stream.receive(snapshot(first, 'e3', 1));
    expect(resyncs).toEqual(['epoch', 'epoch']);
    expect(stream.epoch).toBe('e3');
  });

  it('ignores an update it already applied', () => {
    const { stream, resyncs } = bookStream();
    stream.receive(snapshot(first));
    stream.receive(update(first, change, 41));
    expect(stream.state).toBe(first);
    expect(resyncs).toEqual([]);
  });

  it('is stale while the connection is down and live again once the relay recovered it', () => {
    const { stream } = bookStream();
    stream.receive(snapshot(first));
    stream.connectionLost();
    expect(stream.status).toBe('stale');
    expect(stream.resumePoint).toEqual({ epoch: 'e1', seq: 41 });
    stream.resumed(true);
    expect(stream.status).toBe('live');
  });

  it('iterates the latest verified state and ends on unsubscribe', async () => {
    const { stream } = bookStream();
    const seen: BookState[] = [];
    const done = (async () => {
      for await (const state of stream) seen.push(state);
    })();
    stream.receive(snapshot(first));
    await Promise.resolve();
    await Promise.resolve();
    stream.receive(update(first, change, 42));
    stream.unsubscribe();
    await done;
    expect(seen[0]).toBe(first);
    expect(seen.at(-1)).toEqual(applyBookUpdate(first, change));
    expect(stream.status).toBe('closed');
  });
});

describe('confirmed', () => {
  const confirmed = (seq: number, at: string, epoch = 'e1') =>
    ({ type: 'confirmed', channel: 'book', market, depth: null, epoch, seq, confirmed: at }) as const;

  it("takes the snapshot's rts, then a later confirmation of the state it holds, and nothing else", () => {
    const { stream } = bookStream();
    const heard: string[] = [];
    stream.on('confirmed', ({ confirmedAt }) => heard.push(confirmedAt));
    stream.receive(snapshot(first));
    expect(stream.confirmedAt).toBe(stamp.rts);
    stream.receiveConfirmed(confirmed(41, '2025-06-01T12:00:05.000Z'));
    stream.receiveConfirmed(confirmed(42, '2025-06-01T12:00:06.000Z')); // a state it does not hold
    stream.receiveConfirmed(confirmed(41, '2025-06-01T12:00:07.000Z', 'e2')); // another epoch
    stream.receiveConfirmed(confirmed(41, '2025-06-01T12:00:04.000Z')); // older than what it knows
    expect(heard).toEqual(['2025-06-01T12:00:05.000Z']);
    expect(stream.confirmedAt).toBe('2025-06-01T12:00:05.000Z');
  });

  it('reads a `confirmed` frame, and refuses one without its time', () => {
    const message = confirmed(3, '2025-06-01T12:00:05.000Z');
    expect(decodeFrame(JSON.stringify(message))).toEqual({ ok: true, message });
    expect(decodeFrame(JSON.stringify({ ...message, confirmed: 5 }))).toMatchObject({ ok: false });
  });
});

describe('price stream', () => {
  it('applies changed fields and removes the ones sent as null', () => {
    const host: StreamHost = {
      requestSnapshot: () => undefined,
      release: () => undefined,
      reportListenerError: () => undefined,
    };
    const stream = new PriceSubscription(host, market);
    const fields = { channel: 'price', market, ...stamp } as const;
    stream.receive({
      type: 'snapshot',
      ...fields,
      epoch: 'p',
      seq: 8,
      data: { best_bid: '0.61000000', best_ask: '0.63000000', spread: '0.02000000' },
    });
    stream.receive({
      type: 'update',
      ...fields,
      epoch: 'p',
      seq: 9,
      data: { best_ask: null, spread: null, best_bid: '0.60000000' },
    });
    expect(stream.state).toEqual({ best_bid: '0.60000000' });
  });
});

describe('frame reader', () => {
  it('refuses bad frames with a reason instead of throwing, naming the stream when it can', () => {
    expect(decodeFrame('not json')).toMatchObject({ ok: false });
    expect(decodeFrame('[1]')).toMatchObject({ ok: false });
    const missingSeq = JSON.stringify({ ...snapshot(first), seq: undefined });
    expect(decodeFrame(missingSeq)).toMatchObject({
      ok: false,
      stream: { channel: 'book', market, depth: null },
    });
    const numericSize = JSON.stringify({ ...snapshot(first), data: { bids: [['0.5', 1]], asks: [] } });
    expect(decodeFrame(numericSize)).toMatchObject({ ok: false, reason: 'malformed snapshot: levels' });
  });

  it('accepts valid messages and passes unknown types over', () => {
    expect(decodeFrame(JSON.stringify(snapshot(first)))).toMatchObject({
      ok: true,
      message: { type: 'snapshot' },
    });
    expect(decodeFrame('{"type":"heartbeat","n":1,"ts":"x"}')).toMatchObject({ ok: true });
    expect(decodeFrame('{"type":"future-thing"}')).toEqual({ ok: true, message: undefined });
  });
});
