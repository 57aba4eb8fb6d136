/**
 * Subscribers of a `price` stream with a `threshold` (docs/protocol.md "Per-subscription options"),
 * polls counted and the relay's clock faked: a state goes out when best bid, best ask or midpoint
 * moved by the threshold since the group's last send; a withheld state goes out as the catch-up
 * with the tenth poll after the one that brought it, however often the stream changes; moves that
 * add up to nothing send nothing; an interval still spaces the sends; one frame serves the whole
 * group.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { applyPriceUpdate } from '../../../packages/protocol/src/channels/price/price.ts';
import { THRESHOLD_CATCH_UP_POLLS as CATCH_UP } from '../../../packages/protocol/src/protocol/limits.ts';
import type { PriceData, PriceUpdateData } from '../../../packages/protocol/src/protocol/messages.ts';
import { codecs } from '../../../src/relay/channels/codecs.ts';
import type { Frame } from '../../../src/relay/streams/frame.ts';
import { type AnyStream, Stream, type StreamSubscriber } from '../../../src/relay/streams/stream.ts';

const market = '11111111-1111-4111-8111-111111111111';

class Recorder implements StreamSubscriber {
  readonly frames: { frame: Frame; at: number; kind: string }[] = [];
  deliver(_stream: AnyStream, frame: Frame, kind: 'snapshot' | 'update'): void {
    this.frames.push({ frame, at: Date.now(), kind });
  }
  notify(): void {}
  ended(): void {}
  bids(): string[] {
    return this.frames.map(({ frame }) => JSON.parse(frame.text).data.best_bid as string);
  }
}

/** Best bid in half ticks of 0.01 above 0.50, the ask fixed, the midpoint between them. */
const at = (halfTicks: number): PriceData => {
  const bid = 5_000 + halfTicks * 50; // in units of 0.0001
  const price = (units: number) => (units / 10_000).toFixed(8);
  return { best_bid: price(bid), best_ask: price(6_000), midpoint_price: price((bid + 6_000) / 2) };
};

describe('threshold subscribers', () => {
  let stream: Stream<PriceData, PriceUpdateData>;
  /** One poll of the stream that found `halfTicks` (what the publisher does for each poll). */
  const move = (halfTicks: number) => {
    const ts = new Date().toISOString();
    stream.publish(at(halfTicks), ts, ts, Date.now());
    stream.subscribers.polled();
  };
  const polls = (count: number, halfTicks: number) => {
    for (let i = 0; i < count; i += 1) move(halfTicks);
  };

  beforeEach(() => {
    vi.useFakeTimers();
    stream = new Stream({ channel: 'price', market }, codecs.price, 64);
  });
  afterEach(() => {
    stream.close('test over');
    vi.useRealTimers();
  });

  it('sends the moves that add up to a tick, and the final state as the catch-up ten polls later', () => {
    const [raw, gated] = [new Recorder(), new Recorder()];
    for (const subscriber of [raw, gated]) stream.subscribers.add(subscriber);
    stream.subscribers.pace(gated, undefined, '0.01');
    expect(stream.subscribers.thresholdOf(gated)).toBe('0.01');
    for (let step = 0; step <= 5; step += 1) move(step);
    expect(raw.frames).toHaveLength(6);
    // The first state, then each full tick from what was last sent: 0.50, 0.51, 0.52.
    expect(gated.bids()).toEqual(['0.50000000', '0.51000000', '0.52000000']);
    // The half tick to 0.525 came with the last poll: withheld for the next CATCH_UP - 1 polls...
    polls(CATCH_UP - 1, 5);
    expect(gated.bids()).toHaveLength(3);
    // ...and sent, as the catch-up, with the CATCH_UP-th.
    move(5);
    expect(gated.bids().at(-1)).toBe('0.52500000');
    // After the first state, each message is the change from the one before it: `prev_seq` names
    // it, or (one change since) the stream's own update applies to the seq before its own.
    expect(gated.frames.map(({ kind }) => kind)).toEqual(['snapshot', 'update', 'update', 'update']);
    const messages = gated.frames.map(({ frame }) => JSON.parse(frame.text));
    expect(messages.slice(1).map((message) => message.prev_seq ?? message.seq - 1)).toEqual(
      messages.slice(0, -1).map((message) => message.seq),
    );
    const rebuilt = messages
      .slice(1)
      .reduce((state, message) => applyPriceUpdate(state, message.data), messages[0].data);
    expect(rebuilt).toEqual(at(5));
    polls(CATCH_UP * 3, 5);
    expect(gated.bids()).toHaveLength(4);
  });

  it('sends nothing for moves below the threshold back where they began by the catch-up', () => {
    const gated = new Recorder();
    stream.subscribers.add(gated);
    move(0);
    stream.subscribers.pace(gated, undefined, '0.01');
    // A flicker for CATCH_UP - 1 polls, back at the start on the poll before the catch-up is due.
    for (let step = 1; step < CATCH_UP; step += 1) move(step % 2);
    polls(CATCH_UP * 3, 0);
    // The first state only, sent before the threshold was set.
    expect(gated.bids()).toEqual(['0.50000000']);
  });

  it('on a market moving every poll by less than the threshold, sends one catch-up in CATCH_UP + 1 polls', () => {
    const [raw, gated] = [new Recorder(), new Recorder()];
    for (const subscriber of [raw, gated]) stream.subscribers.add(subscriber);
    move(0);
    stream.subscribers.pace(gated, undefined, '0.05');
    // The bid wanders between 0.50 and 0.52 and changes on every poll: never five cents away.
    const walk = [1, 2, 3, 4, 3, 2];
    const count = (CATCH_UP + 1) * 10;
    for (let poll = 0; poll < count; poll += 1) move(walk[poll % walk.length]!);
    expect(raw.frames).toHaveLength(count + 1);
    // Each change is withheld at once and caught up with the CATCH_UP-th poll after it.
    expect(gated.frames).toHaveLength(1 + count / (CATCH_UP + 1));
  });

  it('with an interval, spaces its sends by it, a catch-up due within it waiting for its end', () => {
    const gated = new Recorder();
    stream.subscribers.add(gated);
    stream.subscribers.pace(gated, 500, '0.01');
    move(0); // leading edge: the first state
    vi.advanceTimersByTime(50);
    move(2); // a tick, but within the interval: owed to its end
    expect(gated.bids()).toEqual(['0.50000000']);
    vi.advanceTimersByTime(450);
    expect(gated.bids()).toEqual(['0.50000000', '0.51000000']);
    vi.advanceTimersByTime(600);
    move(3); // half a tick: withheld, and caught up CATCH_UP polls later, the interval long over
    polls(CATCH_UP - 1, 3);
    expect(gated.bids()).toHaveLength(2);
    move(3);
    expect(gated.bids().at(-1)).toBe('0.51500000');
    move(4); // half a tick again, its catch-up due within the interval just begun
    polls(CATCH_UP, 4);
    expect(gated.bids()).toHaveLength(3);
    vi.advanceTimersByTime(500);
    expect(gated.bids().at(-1)).toBe('0.52000000');
    const gaps = gated.frames.slice(1).map(({ at: when }, i) => when - gated.frames[i]!.at);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(500);
  });

  it('builds one frame per (interval, threshold) group and leaves no timer behind', () => {
    const [a, b, coarse] = [new Recorder(), new Recorder(), new Recorder()];
    for (const subscriber of [a, b, coarse]) stream.subscribers.add(subscriber);
    stream.subscribers.pace(a, undefined, '0.01');
    stream.subscribers.pace(b, undefined, '0.01');
    stream.subscribers.pace(coarse, undefined, '0.05');
    for (let step = 0; step <= 6; step += 1) move(step);
    expect(a.frames.every(({ frame }, i) => b.frames[i]!.frame === frame)).toBe(true);
    expect(a.bids()).toEqual(['0.50000000', '0.51000000', '0.52000000', '0.53000000']);
    expect(coarse.bids()).toEqual(['0.50000000']);
    polls(CATCH_UP, 6);
    expect(coarse.bids()).toEqual(['0.50000000', '0.53000000']);
    expect(a.bids()).toHaveLength(4);
    stream.subscribers.pace(a, undefined, undefined);
    expect(stream.subscribers.thresholdOf(a)).toBeUndefined();
    move(7);
    expect(a.frames.at(-1)!.kind).toBe('update');
    for (const subscriber of [b, coarse]) stream.subscribers.delete(subscriber);
    move(8);
    expect(vi.getTimerCount()).toBe(0);
  });
});
