import { describe, expect, it } from 'vitest';
import type { BookState } from '../../../packages/protocol/src/protocol/book.ts';
import type { BookData } from '../../../packages/protocol/src/protocol/messages.ts';
import { codecs } from '../../../src/relay/channels/codecs.ts';
import { RelayEvents } from '../../../src/relay/events.ts';
import type { Frame } from '../../../src/relay/streams/frame.ts';
import { NOTICES_PER_TURN, StreamPublisher } from '../../../src/relay/streams/publisher.ts';
import { type AnyStream, Stream, type StreamSubscriber } from '../../../src/relay/streams/stream.ts';

const t = (second: number) => `2026-01-01T00:00:0${second}.000Z`;

class Recorder implements StreamSubscriber {
  readonly types: string[] = [];
  deliver(_stream: AnyStream, frame: Frame): void {
    this.types.push((JSON.parse(frame.text) as { type: string }).type);
  }
  notify(_stream: AnyStream, frame: Frame): void {
    this.types.push((JSON.parse(frame.text) as { type: string }).type);
  }
  ended(): void {}
}

function heldStream(market: string): { stream: Stream<BookState, BookData>; client: Recorder } {
  const stream = new Stream<BookState, BookData>({ channel: 'book', market, depth: 10 }, codecs.book, 3);
  const client = new Recorder();
  stream.subscribers.add(client);
  return { stream, client };
}

/** Subscribers of each of `crowdedStreams`' streams: a round's first turn tells a few streams. */
const PER_STREAM = 100;

/** Twelve streams of `PER_STREAM` subscribers each, published once. */
function crowdedStreams(publisher: StreamPublisher): ReturnType<typeof heldStream>[] {
  return Array.from({ length: 12 }, (_, index) => {
    const held = heldStream(`${String(index).padStart(8, '0')}-1111-4111-8111-111111111111`);
    for (let extra = 1; extra < PER_STREAM; extra += 1) held.stream.subscribers.add(new Recorder());
    publisher.publish(held.stream, book, t(0), t(0), 0);
    return held;
  });
}

const book: BookState = {
  bids: [['0.50000000', '1']],
  asks: [['0.60000000', '5']],
  last_price: '0.50000000',
};

describe('StreamPublisher rounds of notices', () => {
  it('visits the streams confirmed since the last round, each once, and no other', async () => {
    const publisher = new StreamPublisher(new RelayEvents(), Date.now);
    publisher.keepConfirmed(true);
    const confirmed = heldStream('11111111-1111-4111-8111-111111111111');
    const changed = heldStream('22222222-2222-4222-8222-222222222222');
    publisher.publish(confirmed.stream, book, t(0), t(0), 0);
    publisher.publish(changed.stream, book, t(0), t(0), 0);
    publisher.confirm(confirmed.stream, t(1), 1000);
    publisher.publish(confirmed.stream, book, t(0), t(2), 2000); // unchanged: a confirmation too
    publisher.publish(changed.stream, { ...book, last_price: '0.51000000' }, t(2), t(2), 2000);

    expect(await publisher.announceConfirmations()).toBe(1);
    expect(confirmed.client.types).toEqual(['snapshot', 'confirmed']);
    expect(changed.client.types).toEqual(['snapshot', 'update']);
    expect(await publisher.announceConfirmations()).toBe(0); // nothing confirmed since
  });

  it('tells about NOTICES_PER_TURN subscribers a turn, every confirmed stream in the round', async () => {
    const publisher = new StreamPublisher(new RelayEvents(), Date.now);
    publisher.keepConfirmed(true);
    const streams = crowdedStreams(publisher);
    for (const { stream } of streams) publisher.confirm(stream, t(1), 1000);
    const round = publisher.announceConfirmations();
    const told = () => streams.filter(({ client }) => client.types.at(-1) === 'confirmed').length;
    expect(told()).toBe(NOTICES_PER_TURN / PER_STREAM); // the first turn's share, at once
    expect(await round).toBe(streams.length);
    expect(told()).toBe(streams.length);
  });

  it('keeps nothing while no rounds are announced', async () => {
    const publisher = new StreamPublisher(new RelayEvents(), Date.now);
    const { stream, client } = heldStream('11111111-1111-4111-8111-111111111111');
    publisher.publish(stream, book, t(0), t(0), 0);
    publisher.confirm(stream, t(1), 1000);
    expect(await publisher.announceConfirmations()).toBe(0);
    publisher.keepConfirmed(true);
    publisher.keepConfirmed(false);
    publisher.confirm(stream, t(2), 2000);
    expect(await publisher.announceConfirmations()).toBe(0);
    expect(client.types).toEqual(['snapshot']);
  });

  it('marks stale about NOTICES_PER_TURN subscribers a turn, leaving live a stream served meanwhile', async () => {
    const events = new RelayEvents();
    const states: string[] = [];
    events.on('stream:state', ({ state }) => states.push(state));
    const publisher = new StreamPublisher(events, Date.now);
    const streams = crowdedStreams(publisher);
    const round = publisher.markStale(streams.map(({ stream }) => [stream, 'upstream_timeout'] as const));
    const stale = () => streams.filter(({ stream }) => stream.freshness === 'stale').length;
    expect(stale()).toBe(NOTICES_PER_TURN / PER_STREAM); // the first turn's share, at once
    // Upstream answers for the last stream before its turn: the sweep's judgement is out of date.
    const served = streams.at(-1)!;
    publisher.confirm(served.stream, t(1), 1000);
    await round;
    expect(stale()).toBe(streams.length - 1);
    expect(served.stream.freshness).toBe('live');
    expect(served.client.types).toEqual(['snapshot']);
    expect(streams[0]!.client.types).toEqual(['snapshot', 'status']);
    expect(states).toEqual(Array.from({ length: streams.length - 1 }, () => 'stale'));
  });
});
