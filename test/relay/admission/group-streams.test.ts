/**
 * The costly stream kinds per connection and per client address group: distinct `rest` paths,
 * catalogue filters and candles streams bounded (the whole request refused); streams nobody holds
 * started at a bounded rate per group, shared ones joined freely; paths upstream has not answered
 * started at a smaller rate per group, answered ones free of it.
 */
import { describe, expect, it } from 'vitest';
import { defaultGroupLimits, type GroupLimits } from '../../../src/relay/admission/group-streams.ts';
import { defaultIsolationLimits, MarketAdmission } from '../../../src/relay/admission/market.ts';
import { StreamRegistry } from '../../../src/relay/streams/registry.ts';
import type { StreamSubscriber } from '../../../src/relay/streams/stream.ts';

const path = (i: number) => `/api/users/user${i}/activity`;

function subscriber(): StreamSubscriber {
  return { deliver() {}, notify() {}, ended() {} };
}

function setup(overrides: Partial<GroupLimits> = {}) {
  let now = 0;
  const registry = new StreamRegistry({ lingerMs: 10, resumeBufferSize: 10 });
  const admission = new MarketAdmission({
    registry,
    // Private targets and per-connection rates out of the way: these tests are about groups.
    limits: {
      ...defaultIsolationLimits,
      maxPrivateTargetsPerConnection: 100_000,
      newMarketsPerSecond: 10_000,
      ...defaultGroupLimits,
      unconfirmedPathsPerSecondPerAddress: 1_000,
      ...overrides,
    },
    now: () => now,
  });
  /** What a session does: check the bounds, admit, join what was not refused. */
  const subscribe = (who: StreamSubscriber, channel: 'rest' | 'markets' | 'candles', ids: string[]) => {
    const over = admission.exceeds(who, channel, ids);
    if (over !== undefined) return { over, refused: new Map() };
    const refused = admission.admit(who, channel, ids);
    for (const id of ids) {
      if (refused.has(id)) continue;
      admission.joined(who, registry.subscribe(who, { channel, market: id, depth: undefined }));
    }
    return { over, refused };
  };
  return { registry, admission, subscribe, advance: (ms: number) => (now += ms) };
}

describe('per-group stream limits', () => {
  it('bounds distinct rest paths per connection and per address group, each path once per group', () => {
    const { admission, subscribe } = setup({ maxRestPaths: 3, maxRestPathsPerAddress: 4 });
    const [a, b, c] = [subscriber(), subscriber(), subscriber()];
    admission.open(a, undefined, '192.0.2.1');
    admission.open(b, undefined, '192.0.2.1');
    admission.open(c, undefined, '198.51.100.7');
    expect(subscribe(a, 'rest', [1, 2, 3, 4].map(path)).over).toEqual({
      code: 'limit_exceeded',
      message: 'at most 3 rest paths per connection',
    });
    expect(subscribe(a, 'rest', [1, 2, 3].map(path)).over).toBeUndefined();
    // b holds one of a's too (counted once for the group) and one of its own: four distinct.
    expect(subscribe(b, 'rest', [1, 5].map(path)).over).toBeUndefined();
    expect(subscribe(b, 'rest', [path(6)]).over?.message).toBe('at most 4 rest paths per client address');
    // Another address has its own count.
    expect(subscribe(c, 'rest', [6, 7, 8].map(path)).over).toBeUndefined();
  });

  it('frees the count when paths are left or the connection closes', () => {
    const { admission, registry, subscribe } = setup({ maxRestPaths: 2, maxRestPathsPerAddress: 2 });
    const [a, b] = [subscriber(), subscriber()];
    admission.open(a, undefined, '192.0.2.1');
    admission.open(b, undefined, '192.0.2.1');
    subscribe(a, 'rest', [1, 2].map(path));
    expect(subscribe(b, 'rest', [path(3)]).over).toBeDefined();
    const stream = registry.get({ channel: 'rest', market: path(1), depth: undefined })!;
    admission.left(a, stream);
    expect(subscribe(b, 'rest', [path(3)]).over).toBeUndefined();
    admission.close(a);
    admission.close(b);
    const again = subscriber();
    admission.open(again, undefined, '192.0.2.1');
    expect(subscribe(again, 'rest', [4, 5].map(path)).over).toBeUndefined();
  });

  it('bounds catalogue filters and candles streams the same way', () => {
    const { admission, subscribe } = setup({
      maxCatalogueFilters: 2,
      maxCatalogueFiltersPerAddress: 3,
      maxCandleStreams: 1,
    });
    const [a, b] = [subscriber(), subscriber()];
    admission.open(a, undefined, '192.0.2.1');
    admission.open(b, undefined, '192.0.2.1');
    expect(subscribe(a, 'markets', ['active', 'all']).over).toBeUndefined();
    expect(subscribe(b, 'markets', ['expired', 'resolved']).over?.message).toBe(
      'at most 3 catalogue filters per client address',
    );
    const candle = (i: number) => `00000000-0000-4000-8000-00000000000${i}:1m:trades`;
    expect(subscribe(a, 'candles', [candle(1), candle(2)]).over?.message).toBe(
      'at most 1 candles streams per connection',
    );
  });

  it('rate-limits streams an address group starts, never those someone else holds', () => {
    const { admission, subscribe, advance } = setup({
      newStreamsPerSecondPerAddress: 10,
      maxRestPaths: 1_000,
      maxRestPathsPerAddress: 1_000,
    });
    const neighbour = subscriber();
    admission.open(neighbour, undefined, '198.51.100.7');
    const shared = Array.from({ length: 150 }, (_, i) => path(1_000 + i));
    expect(subscribe(neighbour, 'rest', shared.slice(0, 100)).refused.size).toBe(0);
    expect(subscribe(neighbour, 'rest', shared.slice(100, 150)).refused.size).toBe(0);
    // Five connections of one address: 200 new streams at once (the burst) between them.
    const attackers = Array.from({ length: 5 }, () => subscriber());
    for (const who of attackers) admission.open(who, undefined, '192.0.2.1');
    let refused = 0;
    for (const [n, who] of attackers.entries()) {
      const mine = Array.from({ length: 100 }, (_, i) => path(n * 100 + i));
      const answer = subscribe(who, 'rest', mine).refused;
      refused += answer.size;
      for (const refusal of answer.values()) expect(refusal.code).toBe('rate_limited');
      // Paths the neighbour holds cost nothing.
      expect(subscribe(who, 'rest', shared.slice(n * 30, n * 30 + 30)).refused.size).toBe(0);
    }
    expect(refused).toBe(300);
    advance(1_000);
    const later = subscribe(
      attackers[0]!,
      'rest',
      Array.from({ length: 20 }, (_, i) => path(900 + i)),
    );
    expect(later.refused.size).toBe(10);
    expect([...later.refused.values()][0]?.message).toMatch(
      /per client address that the relay does not poll yet/,
    );
  });

  it('starts paths upstream has not answered at a smaller rate per group; answered ones are free of it', () => {
    const { admission, registry, subscribe } = setup({ unconfirmedPathsPerSecondPerAddress: 2 });
    const [a, b] = [subscriber(), subscriber()];
    admission.open(a, undefined, '192.0.2.1');
    admission.open(b, undefined, '192.0.2.1');
    // A burst of 10 s' worth: 20 paths.
    const first = subscribe(
      a,
      'rest',
      Array.from({ length: 30 }, (_, i) => path(i)),
    );
    expect(first.refused.size).toBe(10);
    expect([...first.refused.values()][0]?.message).toMatch(/upstream has not answered yet/);
    // A path that had a state is remembered once left: starting it again needs no such token.
    const answered = registry.get({ channel: 'rest', market: path(0), depth: undefined })!;
    const now = new Date().toISOString();
    answered.publish({ success: true } as never, now, now, Date.now());
    admission.left(a, answered);
    registry.unsubscribe(a, answered);
    registry.clear();
    expect(subscribe(b, 'rest', [path(0)]).refused.size).toBe(0);
    expect(subscribe(b, 'rest', [path(99)]).refused.size).toBe(1);
    // Catalogue filters without a token are never unconfirmed.
    expect(subscribe(b, 'markets', ['active']).refused.size).toBe(0);
    expect(subscribe(b, 'markets', ['active:7']).refused.size).toBe(1);
  });
});
