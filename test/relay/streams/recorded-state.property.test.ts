/**
 * The state at a time folded from a stream's record (relay/streams/recorded-state.ts) is the state
 * the stream held: for any run of book states, a recorded snapshot and the relay's own diffs between
 * them fold back to the last state, checksum included, for books (the wire's decimal strings, never
 * numbers) and for prices; a lost update leaves no state until the next snapshot, never a wrong one.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type BookState, bookChecksum } from '../../../packages/protocol/src/protocol/book.ts';
import type { Level } from '../../../packages/protocol/src/protocol/messages.ts';
import type { RecordedMessage } from '../../../src/history/store.ts';
import { diffBook } from '../../../src/relay/channels/book/codec.ts';
import { diffPrice } from '../../../src/relay/channels/price/codec.ts';
import { type FoldedState, foldRecorded } from '../../../src/relay/streams/recorded-state.ts';
import { propertyRuns } from '../../support/property-runs.ts';

const tick = (step: number) => `0.${String(step + 1).padStart(2, '0')}`;
const side = (best: 'high' | 'low') =>
  fc
    .uniqueArray(fc.tuple(fc.nat(98), fc.integer({ min: 1, max: 999_999 })), {
      selector: ([step]) => step,
      maxLength: 30,
    })
    .map((levels) =>
      levels
        .sort(([a], [b]) => (best === 'high' ? b - a : a - b))
        .map(
          ([step, size]): Level => [
            tick(step),
            `${Math.trunc(size / 100)}.${String(size % 100).padStart(2, '0')}`,
          ],
        ),
    );
const bookState = fc
  .tuple(side('high'), side('low'), fc.option(fc.nat(98), { nil: undefined }))
  .map(
    ([bids, asks, last]): BookState =>
      last === undefined ? { bids, asks } : { bids, asks, last_price: tick(last) },
  );
const priceState = fc.record(
  { best_bid: fc.nat(98).map(tick), best_ask: fc.nat(98).map(tick), last_price: fc.nat(98).map(tick) },
  { requiredKeys: [] },
);

/** The messages a stream of `states` sends: a snapshot of the first, then each change as an update. */
function recorded<S>(
  channel: 'book' | 'price',
  states: readonly S[],
  diff: (a: S, b: S) => unknown,
): RecordedMessage[] {
  const messages: RecordedMessage[] = [];
  const push = (type: 'snapshot' | 'update', data: unknown) =>
    messages.push({
      channel,
      stream: `${channel}:m`,
      market: 'm',
      depth: channel === 'book' ? null : undefined,
      epoch: 'e',
      seq: messages.length + 1,
      ts: '2026-01-01T00:00:00.000Z',
      rts: '2026-01-01T00:00:00.000Z',
      type,
      data: JSON.stringify(data),
      checksum: undefined,
    });
  push('snapshot', states[0]);
  states.slice(1).forEach((state, i) => {
    const update = diff(states[i]!, state);
    if (update !== null) push('update', update);
  });
  return messages;
}

const fold = (messages: readonly RecordedMessage[]) =>
  messages.reduce<FoldedState | undefined>((folded, message) => foldRecorded(folded, message), undefined);

describe('the state folded from a record', () => {
  it('is the last book state the stream held, checksum included', () => {
    fc.assert(
      fc.property(fc.array(bookState, { minLength: 1, maxLength: 12 }), (states) => {
        const folded = fold(recorded('book', states, diffBook));
        const last = states.at(-1)!;
        const state = folded?.state as BookState;
        expect({ bids: state.bids, asks: state.asks }).toEqual({ bids: last.bids, asks: last.asks });
        expect(bookChecksum(state)).toBe(bookChecksum(last));
      }),
      { numRuns: propertyRuns(200) },
    );
  });

  it('is the last price the stream held', () => {
    fc.assert(
      fc.property(fc.array(priceState, { minLength: 1, maxLength: 12 }), (states) => {
        expect(fold(recorded('price', states, diffPrice))?.state).toEqual(states.at(-1));
      }),
      { numRuns: propertyRuns(200) },
    );
  });

  it('has no state after a lost update until the next snapshot', () => {
    fc.assert(
      fc.property(fc.array(bookState, { minLength: 3, maxLength: 12 }), fc.nat(), (states, pick) => {
        const messages = recorded('book', states, diffBook);
        fc.pre(messages.length >= 3);
        // An update lost with one after it: the fold reaches that one.
        const lost = 1 + (pick % (messages.length - 2));
        const kept = messages.filter((_, i) => i !== lost);
        expect(fold(kept.slice(0, lost + 1))).toBeUndefined();
        const restarted = { ...messages[0]!, seq: messages.length + 1, type: 'snapshot' as const };
        expect(fold([...kept, restarted])?.state).toEqual(states[0]);
      }),
      { numRuns: propertyRuns(100) },
    );
  });
});
