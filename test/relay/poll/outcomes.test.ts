/**
 * What a poll found beyond its states, applied in one place (relay/poll/outcomes.ts): the streams
 * it ends say why, and the rest goes where it belongs.
 */
import { describe, expect, it } from 'vitest';
import { RelayEvents } from '../../../src/relay/events.ts';
import { applyOutcome, type OutcomeEffects } from '../../../src/relay/poll/outcomes.ts';
import { StreamPublisher } from '../../../src/relay/streams/publisher.ts';
import { StreamRegistry } from '../../../src/relay/streams/registry.ts';
import type { StreamSubscriber } from '../../../src/relay/streams/stream.ts';

const MARKET = '00000000-0000-4000-8000-000000000001';
const nobody: StreamSubscriber = { deliver() {}, notify() {}, ended() {} };

function setup() {
  const events = new RelayEvents();
  const states: { channel: string; state: string; reason?: string }[] = [];
  events.on('stream:state', (event) => states.push(event));
  const registry = new StreamRegistry({ lingerMs: 10, resumeBufferSize: 10 });
  const calls: unknown[][] = [];
  const effects: OutcomeEffects = {
    registry,
    publisher: new StreamPublisher(events, Date.now),
    hinted: (outcome) => calls.push(['hinted', outcome]),
    judgeFreshness: () => calls.push(['judgeFreshness']),
  };
  return { registry, effects, states, calls };
}

describe('applyOutcome', () => {
  it('ends the streams of an id upstream does not have, saying which kind of id, and remembers it', () => {
    const { registry, effects, states } = setup();
    registry.subscribe(nobody, { channel: 'oracle', market: 'feed-1' });
    registry.subscribe(nobody, { channel: 'price', market: MARKET });
    applyOutcome({ type: 'not_found', kind: 'oracle', id: 'feed-1' }, effects);
    expect(states).toMatchObject([
      { channel: 'oracle', state: 'closed', reason: 'oracle feed not found upstream' },
    ]);
    expect(registry.streamsOf('oracle', 'feed-1').size).toBe(0);
    expect(registry.streamsOf('price', MARKET).size).toBe(1);
    applyOutcome({ type: 'not_found', kind: 'price', id: MARKET }, effects);
    expect(states[1]).toMatchObject({ channel: 'price', reason: 'market not found upstream' });
    expect(registry.unknownMarkets.has(MARKET)).toBe(true);
  });

  it("ends a stream that said its last with the stream's own reason, the id still known", () => {
    const { registry, effects, states } = setup();
    registry.subscribe(nobody, { channel: 'market', market: MARKET });
    applyOutcome({ type: 'ended', kind: 'market', id: MARKET, reason: 'market resolved' }, effects);
    expect(states).toMatchObject([{ channel: 'market', state: 'closed', reason: 'market resolved' }]);
    expect(registry.unknownMarkets.has(MARKET)).toBe(false);
  });

  it('passes a failure, a hint and a probabilities map on to the pool', () => {
    const { effects, calls } = setup();
    const response = { success: true as const, probabilities: {} };
    applyOutcome({ type: 'failed' }, effects);
    applyOutcome({ type: 'book_moved', market: MARKET, askedAt: 20, movedAt: 15 }, effects);
    applyOutcome({ type: 'probabilities', response, askedAt: 30 }, effects);
    expect(calls).toEqual([
      ['judgeFreshness'],
      ['hinted', { type: 'book_moved', market: MARKET, askedAt: 20, movedAt: 15 }],
      ['hinted', { type: 'probabilities', response, askedAt: 30 }],
    ]);
  });
});
