/**
 * The threshold's send rule (relay/streams/paced.ts, docs/protocol.md "Per-subscription options")
 * against a model, over random walks of a `price` stream poll by poll: a subscriber with a
 * threshold is sent a state exactly when a watched price moved by the threshold from what it holds,
 * or as the catch-up, with the `THRESHOLD_CATCH_UP_POLLS`-th poll after the first change since its
 * last message if the state then still differs. So it never holds a wrong state for that many polls,
 * at most one message in `THRESHOLD_CATCH_UP_POLLS + 1` polls is a catch-up, and once the market
 * stops it holds the stream's state within that many polls.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyPriceUpdate } from '../../../packages/protocol/src/channels/price/price.ts';
import { THRESHOLD_CATCH_UP_POLLS as CATCH_UP } from '../../../packages/protocol/src/protocol/limits.ts';
import type { PriceData, PriceUpdateData } from '../../../packages/protocol/src/protocol/messages.ts';
import { codecs } from '../../../src/relay/channels/codecs.ts';
import type { Frame } from '../../../src/relay/streams/frame.ts';
import { type AnyStream, Stream, type StreamSubscriber } from '../../../src/relay/streams/stream.ts';
import { thresholdMove } from '../../../src/relay/streams/threshold.ts';
import { propertyRuns } from '../../support/property-runs.ts';

const market = '11111111-1111-4111-8111-111111111111';

/** Rebuilds the state it is sent, as a client does. */
class Holder implements StreamSubscriber {
  state: PriceData | undefined;
  messages = 0;
  deliver(_stream: AnyStream, frame: Frame, kind: 'snapshot' | 'update'): void {
    const message = JSON.parse(frame.text) as { data: PriceData | PriceUpdateData };
    this.state =
      kind === 'snapshot' ? (message.data as PriceData) : applyPriceUpdate(this.state!, message.data);
    this.messages += 1;
  }
  notify(): void {}
  ended(): void {}
}

/** Prices in units of 0.001 (a tick of the simulator's finer markets), as upstream's text. */
const text = (units: number): string => (units / 1_000).toFixed(8);
const priceOf = (bid: number, ask: number, last: number): PriceData => ({
  best_bid: text(bid),
  best_ask: text(ask),
  midpoint_price: text((bid + ask) / 2),
  last_price: text(last),
  spread: text(ask - bid),
});

/** One poll: how the bid, the ask and the last price moved, in ticks (all 0: a poll that found no change). */
const poll = fc.record({
  bid: fc.integer({ min: -3, max: 3 }),
  ask: fc.integer({ min: -3, max: 3 }),
  last: fc.integer({ min: -1, max: 1 }),
});
/** Often still for a while, so catch-ups and states back where they began are tried. */
const polls = fc.array(fc.oneof(poll, fc.constant({ bid: 0, ask: 0, last: 0 })), { maxLength: 120 });

describe('threshold catch-up (property)', () => {
  it('sends exactly the moves and the catch-ups, never holds a wrong state CATCH_UP polls, and ends right', () => {
    fc.assert(
      fc.property(polls, fc.constantFrom('0.005', '0.01', '0.02', '0.05'), (walk, threshold) => {
        const stream = new Stream<PriceData, PriceUpdateData>({ channel: 'price', market }, codecs.price, 16);
        let [bid, ask, last] = [400, 600, 500];
        const publish = () => {
          const ts = new Date(0).toISOString();
          stream.publish(priceOf(bid, ask, last), ts, ts, 0);
          stream.subscribers.polled();
        };
        publish();
        const [raw, gated] = [new Holder(), new Holder()];
        for (const holder of [raw, gated]) {
          stream.subscribers.add(holder);
          holder.deliver(stream, stream.snapshotFrame(), 'snapshot');
        }
        stream.subscribers.pace(gated, undefined, threshold);
        // The model: the poll of the first change since the gated subscriber's last message.
        let firstChange: number | undefined;
        let catchUps = 0;
        const stillFor = Array.from({ length: CATCH_UP }, () => ({ bid: 0, ask: 0, last: 0 }));
        for (const [index, step] of [...walk, ...stillFor].entries()) {
          const held = gated.state!;
          const before = gated.messages;
          bid = Math.min(Math.max(bid + step.bid, 1), 499);
          ask = Math.min(Math.max(ask + step.ask, 501), 999);
          last = Math.min(Math.max(last + step.last, 1), 999);
          publish();
          const current = stream.state!;
          const move = thresholdMove(held, current, threshold);
          if (move !== 'same') firstChange ??= index;
          const catchUp = firstChange !== undefined && index - firstChange >= CATCH_UP;
          const due = move === 'moved' || (move === 'withheld' && catchUp);
          expect(gated.messages - before, `poll ${index}: ${move}, first change at ${firstChange}`).toBe(
            due ? 1 : 0,
          );
          if (due || catchUp) firstChange = undefined;
          if (due && move === 'withheld') catchUps += 1;
          expect(gated.state).toEqual(due ? current : held);
          // A state that differs from the stream's has done so for fewer than CATCH_UP polls.
          if (thresholdMove(gated.state, current, threshold) !== 'same')
            expect(index - firstChange!).toBeLessThan(CATCH_UP);
        }
        expect(catchUps).toBeLessThanOrEqual(Math.ceil((walk.length + CATCH_UP) / (CATCH_UP + 1)));
        expect(gated.state).toEqual(raw.state);
        expect(raw.state).toEqual(stream.state);
        stream.close('test over');
      }),
      { numRuns: propertyRuns(300) },
    );
  });
});
