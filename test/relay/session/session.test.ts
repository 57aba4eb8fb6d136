/**
 * A session is everything a transport does not do: driven here through a sink that only records,
 * as a new transport would give it, it answers, joins, resumes, holds back a slow reader and leaves
 * everything on close.
 */
import { describe, expect, it } from 'vitest';
import type { ResumePoint, ServerMessage } from '../../../packages/protocol/src/protocol/messages.ts';
import { defaultIsolationLimits, MarketAdmission } from '../../../src/relay/admission/market.ts';
import { RelayEvents } from '../../../src/relay/events.ts';
import { Session, type SessionSink } from '../../../src/relay/session/session.ts';
import type { Frame } from '../../../src/relay/streams/frame.ts';
import { StreamRegistry } from '../../../src/relay/streams/registry.ts';
import type { AnyStream, StreamOf } from '../../../src/relay/streams/stream.ts';

const A = '3f2b8c1e-5d4a-4e6b-9c7d-1a2b3c4d5e6f';
const B = '4f2b8c1e-5d4a-4e6b-9c7d-1a2b3c4d5e6f';

class RecordingSink implements SessionSink {
  readonly messages: ServerMessage[] = [];
  readonly joins: [string, ResumePoint | undefined][] = [];
  closed = false;
  bufferedBytes = 0;
  slowClosed = 0;
  get backlog(): number | undefined {
    return this.closed ? undefined : this.bufferedBytes;
  }
  writeStream(_stream: AnyStream, frame: Frame): void {
    this.messages.push(JSON.parse(frame.text) as ServerMessage);
  }
  write(frame: Frame): void {
    this.messages.push(JSON.parse(frame.text) as ServerMessage);
  }
  closeSlowConsumer(): void {
    this.slowClosed += 1;
    this.closed = true;
  }
  joined(stream: AnyStream, resumedFrom: ResumePoint | undefined): void {
    this.joins.push([stream.key, resumedFrom]);
  }
}

function setUp(maxStreams = 10) {
  const registry = new StreamRegistry({ lingerMs: 1_000, resumeBufferSize: 10 });
  const marketAdmission = new MarketAdmission({ registry, limits: defaultIsolationLimits });
  const events = new RelayEvents();
  const sink = new RecordingSink();
  let released = 0;
  const limits = { highWaterBytes: 100, maxBufferBytes: 1_000, slowConsumerTimeoutMs: 60_000, maxStreams };
  const session = new Session(
    7,
    sink,
    { registry, marketAdmission, events, limits },
    { onClose: () => (released += 1) },
  );
  let now = 0;
  const post = (market: string, bid: string) =>
    (registry.get({ channel: 'price', market }) as StreamOf<'price'>).publish(
      { best_bid: bid },
      'ts',
      'rts',
      ++now,
    );
  return { registry, events, sink, session, post, released: () => released };
}

describe('Session', () => {
  it('answers a subscribe, joins its streams and sends their messages through the sink', () => {
    const { sink, session, post } = setUp();
    session.handle({ op: 'subscribe', id: 1, channel: 'price', markets: [A, A] });
    expect(sink.messages).toEqual([{ type: 'subscribed', id: 1, channel: 'price', markets: [A] }]);
    post(A, '0.5');
    expect(sink.messages.at(-1)).toMatchObject({ type: 'snapshot', market: A, data: { best_bid: '0.5' } });
    expect(session.streamCount).toBe(1);
  });

  it('answers what it refuses with errors naming the channel, and holds nothing for them', () => {
    const { sink, session } = setUp(1);
    session.handle({ op: 'subscribe', id: 1, channel: 'nope', markets: [A] });
    session.handle({ op: 'subscribe', id: 2, channel: 'price', markets: [A], depth: 10 });
    session.handle({ op: 'subscribe', id: 3, channel: 'price', markets: [A, B] });
    expect(sink.messages.map((m) => m.type === 'error' && [m.id, m.code, m.channel])).toEqual([
      [1, 'unknown_channel', 'nope'],
      [2, 'bad_request', 'price'],
      [3, 'limit_exceeded', 'price'],
    ]);
    expect(session.streamCount).toBe(0);
  });

  it('replays from a resume point and says so per stream, for every stream when the request resumes all', () => {
    const { sink, session, post, registry } = setUp();
    // A stream with a history: joined, moved twice, and the client resumes from its first message.
    session.handle({ op: 'subscribe', channel: 'price', markets: [A] });
    post(A, '0.1');
    post(A, '0.2');
    const stream = registry.get({ channel: 'price', market: A }) as StreamOf<'price'>;
    const from = { epoch: stream.epoch, seq: 1 };
    sink.messages.length = 0;
    session.handle({
      op: 'subscribe',
      channel: 'price',
      markets: [A, B],
      resume: { [A]: from },
      resumesAll: true,
    });
    expect(sink.messages[0]).toEqual({
      type: 'subscribed',
      channel: 'price',
      markets: [A, B],
      recovered: { [A]: true, [B]: false },
    });
    expect(sink.messages.slice(1)).toMatchObject([{ type: 'update', market: A, seq: 2 }]);
    expect(sink.joins).toContainEqual([stream.key, from]);
  });

  it('holds a slow reader back, resends one snapshot on drain, and ends it the sink’s way when too slow', () => {
    const { sink, session, post, events } = setUp();
    const conflated: number[] = [];
    const slow: number[] = [];
    events.on('connection:conflated', ({ streams }) => conflated.push(streams));
    events.on('connection:slow-consumer', ({ id }) => slow.push(id));
    session.handle({ op: 'subscribe', channel: 'price', markets: [A] });
    post(A, '0.1');
    sink.bufferedBytes = 500;
    const written = sink.messages.length;
    post(A, '0.2');
    expect(sink.messages.length).toBe(written);
    expect(session.isHoldingBack).toBe(true);
    sink.bufferedBytes = 0;
    session.drained();
    expect(conflated).toEqual([1]);
    expect(sink.messages.at(-1)).toMatchObject({ type: 'snapshot', seq: 2 });
    session.slowConsumer();
    expect([sink.slowClosed, slow]).toEqual([1, [7]]);
  });

  it('leaves every stream and releases admission once on close', () => {
    const { session, registry, released } = setUp();
    session.handle({ op: 'subscribe', channel: 'price', markets: [A, B] });
    const stream = registry.get({ channel: 'price', market: A });
    expect(stream?.subscribers.has(session)).toBe(true);
    session.close();
    session.close();
    expect(stream?.subscribers.size).toBe(0);
    expect(session.streamCount).toBe(0);
    expect(released()).toBe(1);
  });
});
