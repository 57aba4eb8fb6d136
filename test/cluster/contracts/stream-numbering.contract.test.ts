/**
 * The contract every stream numbering keeps (relay/coordination/stream-numbering.ts), run against each
 * implementation: a relay alone (the local numbering) and a relay in cluster mode that holds the
 * target's lease, on one Redis and on a Redis Cluster of three primaries. Poll targets call
 * `produce` and `close` the same way whichever they were given, so both must serve this relay's
 * streams alike.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { BookState } from '../../../packages/protocol/src/protocol/book.ts';
import type { BookDepth, PriceData } from '../../../packages/protocol/src/protocol/messages.ts';
import type { Broker } from '../../../src/relay/coordination/broker.ts';
import {
  bookNumberedCodec,
  type NumberedCodec,
  priceNumberedCodec,
} from '../../../src/relay/coordination/codecs.ts';
import type { ChangeHere, StreamNumbering } from '../../../src/relay/coordination/stream-numbering.ts';
import { RelayEvents } from '../../../src/relay/events.ts';
import type { Frame } from '../../../src/relay/streams/frame.ts';
import { StreamPublisher } from '../../../src/relay/streams/publisher.ts';
import { StreamRegistry } from '../../../src/relay/streams/registry.ts';
import type { AnyStream, Stream, StreamSubscriber } from '../../../src/relay/streams/stream.ts';
import { useBrokerImplementations } from '../../support/cluster/brokers.ts';

const implementations = useBrokerImplementations();

/** What a subscriber received, in order. */
class Recorder implements StreamSubscriber {
  readonly kinds: string[] = [];
  deliver(_stream: AnyStream, _frame: Frame, kind: 'snapshot' | 'update'): void {
    this.kinds.push(kind);
  }
  notify(): void {}
  ended(): void {}
}

/** A book of `levels` bids and asks, the best bid's size `size`; prices in upstream's form (8 places). */
function bookOf(levels: number, size: string): BookState {
  const bids: [string, string][] = [];
  const asks: [string, string][] = [];
  for (let i = 0; i < levels; i++) {
    bids.push([`0.${String(4999 - i).padStart(4, '0')}0000`, i === 0 ? size : '1']);
    asks.push([`0.${String(5001 + i).padStart(4, '0')}0000`, '2']);
  }
  return { bids, asks, last_price: '0.50000000' };
}

/**
 * What a target of `codec`'s channel hands a numbering that takes this relay's streams' changes:
 * each ungrouped stream of the market, with the change made with the codec from the state it holds.
 */
function changesHere<State, Delta>(
  codec: NumberedCodec<State, Delta>,
  registry: StreamRegistry,
  market: string,
  state: State,
): ChangeHere<State, Delta>[] {
  const streams = [...registry.streamsOf(codec.channel, market)] as Stream<State, Delta>[];
  return streams
    .filter((stream) => stream.group === undefined)
    .map((stream) => ({ stream, change: stream.changeOf(codec.project(state, stream.depth)) }));
}

let run = 0;

describe.each(implementations)('StreamNumbering contract: %s', (_name, create) => {
  const open: Broker[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((broker) => broker.close()));
  });

  /** A numbering of `codec` for a market of its own, with this relay holding the target's lease. */
  async function numbering<State, Delta>(codec: NumberedCodec<State, Delta>) {
    const broker = await create();
    open.push(broker);
    run += 1;
    const market = `00000000-0000-4000-8000-${String(run).padStart(12, '0')}`;
    const key = `${codec.channel}:${market}:${Date.now()}`;
    const events = new RelayEvents();
    const registry = new StreamRegistry({ lingerMs: 10, resumeBufferSize: 10 });
    const publisher = new StreamPublisher(events, Date.now);
    expect(await broker.claim(key, 1_000)).toBe(true);
    let closed = 0;
    const streams: StreamNumbering<State, Delta> = broker.streams(
      key,
      market,
      codec,
      { registry, publisher, now: Date.now, closeMarket: () => (closed += 1) },
      () => {},
    );
    let askedAt = 0;
    /** One poll of `state`, asked after every earlier one. */
    const produce = (state: State) => {
      askedAt += 1;
      const receivedAt = Date.now();
      const rts = new Date(receivedAt).toISOString();
      const polled = streams.keepsWholeState
        ? { whole: state }
        : { here: changesHere(codec, registry, market, state) };
      return streams.produce(polled, { askedAt, ts: rts, rts, receivedAt });
    };
    return { market, registry, streams, produce, closed: () => closed };
  }

  function subscribeBook(registry: StreamRegistry, market: string, depth: BookDepth) {
    const recorder = new Recorder();
    const stream = registry.subscribe(recorder, { channel: 'book', market, depth });
    return { recorder, stream };
  }

  it("serves a first poll as each stream's snapshot, cut to its depth", async () => {
    const { market, registry, produce } = await numbering(bookNumberedCodec);
    const full = subscribeBook(registry, market, null);
    const top = subscribeBook(registry, market, 10);
    const book = bookOf(12, '5');
    expect(await produce(book)).toMatchObject({ changed: false, first: true });
    expect(full.stream.state).toEqual(book);
    expect(top.stream.state).toEqual({ ...book, bids: book.bids.slice(0, 10), asks: book.asks.slice(0, 10) });
    for (const { stream, recorder } of [full, top]) {
      expect(stream.seq).toBe(1);
      expect(recorder.kinds).toEqual(['snapshot']);
    }
  });

  it('confirms an unchanged poll without a message, and numbers a change as the next update', async () => {
    const { market, registry, produce } = await numbering(bookNumberedCodec);
    const { stream, recorder } = subscribeBook(registry, market, null);
    const book = bookOf(3, '5');
    await produce(book);
    const { epoch } = stream;
    expect(await produce(book)).toMatchObject({ changed: false, first: false });
    expect(await produce(bookOf(3, '5'))).toMatchObject({ changed: false, first: false });
    expect(stream.seq).toBe(1);
    expect(await produce(bookOf(3, '7'))).toMatchObject({ changed: true, first: false });
    expect({ epoch: stream.epoch, seq: stream.seq }).toEqual({ epoch, seq: 2 });
    expect(stream.state).toEqual(bookOf(3, '7'));
    expect(recorder.kinds).toEqual(['snapshot', 'update']);
  });

  it('gives a stream that joins later the current state as its snapshot', async () => {
    const { market, registry, produce } = await numbering(bookNumberedCodec);
    subscribeBook(registry, market, null);
    await produce(bookOf(60, '5'));
    await produce(bookOf(60, '6'));
    const late = subscribeBook(registry, market, 50);
    expect(await produce(bookOf(60, '6'))).toMatchObject({ first: true });
    expect(late.stream.state).toMatchObject({ bids: bookOf(60, '6').bids.slice(0, 50) });
    expect(late.recorder.kinds).toEqual(['snapshot']);
  });

  it("numbers a market's price the same way", async () => {
    const { market, registry, produce } = await numbering(priceNumberedCodec);
    const recorder = new Recorder();
    const stream = registry.subscribe(recorder, { channel: 'price', market });
    const price = (bid: string): PriceData => ({ best_bid: bid, best_ask: '0.6000' });
    expect(await produce(price('0.4000'))).toMatchObject({ changed: false, first: true });
    expect(await produce(price('0.4000'))).toMatchObject({ changed: false, first: false });
    expect(await produce(price('0.4100'))).toMatchObject({ changed: true, first: false });
    expect(stream.state).toEqual(price('0.4100'));
    expect(stream.seq).toBe(2);
    expect(recorder.kinds).toEqual(['snapshot', 'update']);
  });

  it("lets the target's streams end when upstream has no such market, while the lease is ours", async () => {
    const { market, registry, streams, produce } = await numbering(bookNumberedCodec);
    subscribeBook(registry, market, null);
    await produce(bookOf(2, '1'));
    expect(await streams.close()).toBe(true);
  });
});
