/**
 * A session's `"*"` subscriptions (relay/session/wildcard.ts), driven by the catalogue stream it
 * follows: the markets of each catalogue state are joined and announced, those that leave are left
 * and announced, a change that keeps the active ids announces nothing, and a joined stream upstream
 * refused (never had a state) is tried again once the relay has forgotten the refusal; a `market`
 * stream the catalogue lets go of first is left only once it closed with its market's last update.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { MarketsData, ServerMessage } from '../../../packages/protocol/src/protocol/messages.ts';
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
  readonly backlog = 0;
  writeStream(_stream: AnyStream, frame: Frame): void {
    this.messages.push(JSON.parse(frame.text) as ServerMessage);
  }
  write(frame: Frame): void {
    this.messages.push(JSON.parse(frame.text) as ServerMessage);
  }
  closeSlowConsumer(): void {}
}

function setUp() {
  const registry = new StreamRegistry({ lingerMs: 1_000, resumeBufferSize: 10 });
  const marketAdmission = new MarketAdmission({ registry, limits: defaultIsolationLimits });
  const sink = new RecordingSink();
  const limits = {
    highWaterBytes: 100,
    maxBufferBytes: 1_000,
    slowConsumerTimeoutMs: 60_000,
    maxStreams: 10,
  };
  const session = new Session(1, sink, { registry, marketAdmission, events: new RelayEvents(), limits });
  let now = 0;
  const catalogue = (markets: Record<string, number>) => {
    const state: MarketsData = Object.fromEntries(
      Object.entries(markets).map(([id, volume]) => [id, { market_id: id, status: 'ACTIVE', volume }]),
    );
    const stream = registry.get({ channel: 'markets', market: 'active' }) as StreamOf<'markets'>;
    stream.publish(state, 'ts', 'rts', ++now);
  };
  const announced = (type: 'subscribed' | 'unsubscribed') =>
    sink.messages.flatMap((m) => (m.type === type && m.wildcard === true ? [m.markets] : []));
  return { registry, sink, session, catalogue, announced };
}

describe('SessionWildcards', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('joins and leaves as the catalogue says; a change that keeps the active ids announces nothing', () => {
    const { sink, session, catalogue, announced, registry } = setUp();
    session.handle({ op: 'subscribe', id: 1, channel: 'price', markets: ['*'] });
    expect(sink.messages).toEqual([{ type: 'subscribed', id: 1, channel: 'price', markets: ['*'] }]);
    catalogue({ [A]: 1 });
    catalogue({ [A]: 2 });
    catalogue({ [A]: 3, [B]: 1 });
    catalogue({ [B]: 2 });
    expect(announced('subscribed')).toEqual([[A], [B]]);
    expect(announced('unsubscribed')).toEqual([[A]]);
    expect(session.streamCount).toBe(1);
    expect(registry.get({ channel: 'price', market: A })?.subscribers.size ?? 0).toBe(0);
    session.close();
    expect(registry.get({ channel: 'markets', market: 'active' })?.subscribers.size).toBe(0);
  });

  it('a stream upstream refused waits, and is joined again once the refusal is forgotten', () => {
    const { sink, session, catalogue, announced, registry } = setUp();
    session.handle({ op: 'subscribe', id: 1, channel: 'price', markets: ['*'] });
    catalogue({ [A]: 1 });
    expect(registry.closeMarket('price', A, 'market not found upstream')).toHaveLength(1);
    expect(sink.messages.at(-1)).toMatchObject({ type: 'error', code: 'unknown_market', market: A });
    expect(session.streamCount).toBe(0);
    const errors = sink.messages.length;
    vi.advanceTimersByTime(5_000);
    expect(sink.messages).toHaveLength(errors);
    vi.advanceTimersByTime(60_000);
    expect(announced('subscribed')).toEqual([[A], [A]]);
    expect(session.streamCount).toBe(1);
  });

  it('market "*": a market the catalogue drops first is left after its stream closes, with its last update', () => {
    const { sink, session, catalogue, announced, registry } = setUp();
    session.handle({ op: 'subscribe', id: 1, channel: 'market', markets: ['*'] });
    catalogue({ [A]: 1, [B]: 1 });
    const record = (status: string) => ({ market_id: A, status });
    const streamA = registry.get({ channel: 'market', market: A }) as StreamOf<'market'>;
    streamA.publish(record('ACTIVE'), 'ts', 'rts', 1);
    catalogue({ [B]: 2 });
    expect(announced('unsubscribed')).toEqual([]);
    streamA.publish(record('EXPIRED'), 'ts', 'rts', 2);
    registry.closeStreams('market', A, 'market expired');
    const ofA = sink.messages.filter(
      (m) => ('market' in m && m.market === A) || (m.type === 'unsubscribed' && m.wildcard === true),
    );
    expect(ofA.map((m) => m.type)).toEqual(['snapshot', 'update', 'status', 'unsubscribed']);
    expect(ofA[1]).toMatchObject({ data: { status: 'EXPIRED' } });
    expect(announced('unsubscribed')).toEqual([[A]]);
    vi.advanceTimersByTime(60_000);
    expect(announced('unsubscribed')).toEqual([[A]]);
    expect(session.streamCount).toBe(1);
  });

  it('market "*": a dropped market whose stream never closes is left after a while; one listed again stays', () => {
    const { session, catalogue, announced, registry } = setUp();
    session.handle({ op: 'subscribe', id: 1, channel: 'market', markets: ['*'] });
    catalogue({ [A]: 1, [B]: 1 });
    for (const market of [A, B])
      (registry.get({ channel: 'market', market }) as StreamOf<'market'>).publish(
        { market_id: market, status: 'ACTIVE' },
        'ts',
        'rts',
        1,
      );
    catalogue({ [B]: 2 });
    catalogue({ [A]: 3 });
    catalogue({ [A]: 4, [B]: 3 });
    vi.advanceTimersByTime(60_000);
    expect(announced('unsubscribed')).toEqual([]);
    catalogue({ [B]: 4 });
    vi.advanceTimersByTime(5_000);
    expect(announced('unsubscribed')).toEqual([]);
    vi.advanceTimersByTime(30_000);
    expect(announced('unsubscribed')).toEqual([[A]]);
    expect(session.streamCount).toBe(1);
    expect(registry.get({ channel: 'market', market: A })?.subscribers.size ?? 0).toBe(0);
  });

  it('price "*" leaves a dropped market at once', () => {
    const { session, catalogue, announced, registry } = setUp();
    session.handle({ op: 'subscribe', id: 1, channel: 'price', markets: ['*'] });
    catalogue({ [A]: 1 });
    (registry.get({ channel: 'price', market: A }) as StreamOf<'price'>).publish(
      { best_bid: '0.5' },
      'ts',
      'rts',
      1,
    );
    catalogue({});
    expect(announced('unsubscribed')).toEqual([[A]]);
  });
});
