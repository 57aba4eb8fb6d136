import { describe, expect, it } from 'vitest';
import type { BookState } from '../../../packages/protocol/src/protocol/book.ts';
import type { BookData } from '../../../packages/protocol/src/protocol/messages.ts';
import { codecs } from '../../../src/relay/channels/codecs.ts';
import { RelayEvents } from '../../../src/relay/events.ts';
import type { Frame } from '../../../src/relay/streams/frame.ts';
import { StreamPublisher } from '../../../src/relay/streams/publisher.ts';
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

const book: BookState = {
  bids: [['0.50000000', '1']],
  asks: [['0.60000000', '5']],
  last_price: '0.50000000',
};

describe('StreamPublisher confirmation rounds', () => {
  it('visits the streams confirmed since the last round, each once, and no other', () => {
    const publisher = new StreamPublisher(new RelayEvents(), Date.now);
    publisher.keepConfirmed(true);
    const confirmed = heldStream('11111111-1111-4111-8111-111111111111');
    const changed = heldStream('22222222-2222-4222-8222-222222222222');
    publisher.publish(confirmed.stream, book, t(0), t(0), 0);
    publisher.publish(changed.stream, book, t(0), t(0), 0);
    publisher.confirm(confirmed.stream, t(1), 1000);
    publisher.publish(confirmed.stream, book, t(0), t(2), 2000); // unchanged: a confirmation too
    publisher.publish(changed.stream, { ...book, last_price: '0.51000000' }, t(2), t(2), 2000);

    expect(publisher.announceConfirmations()).toBe(1);
    expect(confirmed.client.types).toEqual(['snapshot', 'confirmed']);
    expect(changed.client.types).toEqual(['snapshot', 'update']);
    expect(publisher.announceConfirmations()).toBe(0); // nothing confirmed since
  });

  it('keeps nothing while no rounds are announced', () => {
    const publisher = new StreamPublisher(new RelayEvents(), Date.now);
    const { stream, client } = heldStream('11111111-1111-4111-8111-111111111111');
    publisher.publish(stream, book, t(0), t(0), 0);
    publisher.confirm(stream, t(1), 1000);
    expect(publisher.announceConfirmations()).toBe(0);
    publisher.keepConfirmed(true);
    publisher.keepConfirmed(false);
    publisher.confirm(stream, t(2), 2000);
    expect(publisher.announceConfirmations()).toBe(0);
    expect(client.types).toEqual(['snapshot']);
  });
});
