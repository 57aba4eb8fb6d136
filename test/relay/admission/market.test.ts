/**
 * Which new markets a subscription may add: shared markets are free; private ones are capped per
 * connection and per key; markets new to the relay are rate limited; ids the catalogue does not
 * list cost at most a small relay-wide rate of lookups.
 */
import { describe, expect, it } from 'vitest';
import { defaultGroupLimits } from '../../../src/relay/admission/group-streams.ts';
import { KnownMarkets } from '../../../src/relay/admission/known-markets.ts';
import { type IsolationLimits, MarketAdmission } from '../../../src/relay/admission/market.ts';
import { StreamRegistry } from '../../../src/relay/streams/registry.ts';
import type { StreamSubscriber } from '../../../src/relay/streams/stream.ts';
import type { MarketsResponse } from '../../../src/upstream/schemas.ts';

const marketId = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;

function subscriber(): StreamSubscriber {
  return { deliver() {}, notify() {}, ended() {} };
}

const limits: IsolationLimits = {
  maxPrivateTargetsPerConnection: 3,
  maxPrivateTargetsPerKey: 4,
  newMarketsPerSecond: 100,
  newMarketsPerSecondPerKey: 100,
  lookupsPerSecond: 1,
  ...defaultGroupLimits,
};

function setup(overrides: Partial<IsolationLimits> = {}, catalogue?: KnownMarkets) {
  let now = 0;
  const registry = new StreamRegistry({ lingerMs: 10, resumeBufferSize: 10 });
  const marketAdmission = new MarketAdmission({
    registry,
    limits: { ...limits, ...overrides },
    now: () => now,
    ...(catalogue === undefined ? {} : { catalogue }),
  });
  /** What a connection does: admit, then subscribe what was not refused. */
  const subscribe = (who: StreamSubscriber, markets: string[]) => {
    const refused = marketAdmission.admit(who, 'book', markets);
    for (const market of markets)
      if (!refused.has(market)) registry.subscribe(who, { channel: 'book', market, depth: null });
    return refused;
  };
  return { registry, marketAdmission, subscribe, advance: (ms: number) => (now += ms) };
}

/** A catalogue that lists `listed`, not loaded yet. */
function catalogueOf(listed: string[]): KnownMarkets {
  const catalogue = new KnownMarkets({
    markets: async (): Promise<MarketsResponse> => ({
      success: true,
      markets: listed.map((market_id) => ({
        market_id,
        title: 't',
        status: 'ACTIVE',
        exchange_address: '0x0',
        oracle_address: '0x0',
        expiration_timestamp: '2030-01-01T00:00:00.000Z',
        taker_fee_bps: 0,
        probability: 0.5,
        volume: 0,
      })),
      pagination: { total: 2, limit: 100, offset: 0, hasMore: false },
    }),
  });
  return catalogue;
}

describe('MarketAdmission', () => {
  it('caps the markets only one connection wants, never the ones others share', () => {
    const { marketAdmission, subscribe } = setup();
    const a = subscriber();
    const b = subscriber();
    marketAdmission.open(a, undefined);
    marketAdmission.open(b, undefined);
    expect(subscribe(b, [marketId(1), marketId(2)]).size).toBe(0);
    const refused = subscribe(a, [1, 2, 3, 4, 5, 6].map(marketId));
    // 1 and 2 are b's too (free); 3, 4 and 5 fill a's three private slots; 6 is one too many.
    expect([...refused]).toEqual([[marketId(6), expect.objectContaining({ code: 'limit_exceeded' })]]);
  });

  it('caps the private markets of all connections of one API key together', () => {
    const { marketAdmission, subscribe } = setup();
    const [a, b] = [subscriber(), subscriber()];
    marketAdmission.open(a, 'key-1');
    marketAdmission.open(b, 'key-1');
    expect(subscribe(a, [1, 2, 3].map(marketId)).size).toBe(0);
    const refused = subscribe(b, [4, 5].map(marketId));
    expect([...refused.keys()]).toEqual([marketId(5)]);
    expect(refused.get(marketId(5))?.message).toMatch(/per API key/);
  });

  it('rate-limits markets the relay does not poll yet, per connection', () => {
    const { marketAdmission, subscribe, advance } = setup({
      newMarketsPerSecond: 1,
      maxPrivateTargetsPerConnection: 1_000,
    });
    const a = subscriber();
    marketAdmission.open(a, undefined);
    const first = subscribe(
      a,
      Array.from({ length: 120 }, (_, i) => marketId(i)),
    );
    // A burst of one full request (100), then one a second.
    expect(first.size).toBe(20);
    expect([...first.values()].every((refusal) => refusal.code === 'rate_limited')).toBe(true);
    advance(2_000);
    expect(subscribe(a, [200, 201, 202].map(marketId)).size).toBe(1);
  });

  it('answers ids the catalogue does not list as unknown, after a few relay-wide lookups', async () => {
    const listed = [marketId(1), marketId(2)];
    const catalogue = catalogueOf(listed);
    expect(catalogue.verdict(marketId(9))).toBe('unknown');
    await catalogue.refresh();
    const { marketAdmission, subscribe, advance } = setup(
      { maxPrivateTargetsPerConnection: 1_000 },
      catalogue,
    );
    const a = subscriber();
    marketAdmission.open(a, undefined);
    const strangers = Array.from({ length: 50 }, (_, i) => marketId(100 + i));
    const refused = subscribe(a, [...listed, ...strangers]);
    expect(refused.has(marketId(1))).toBe(false);
    // A burst of ten lookups: the rest are answered unknown_market without a poll.
    expect(refused.size).toBe(40);
    expect([...refused.values()].every((refusal) => refusal.code === 'unknown_market')).toBe(true);
    advance(1_000);
    expect(subscribe(a, [300, 301, 302].map(marketId)).size).toBe(2);
  });

  it('judges a candles stream by its market: one the catalogue does not list costs no backfill', async () => {
    const catalogue = catalogueOf([marketId(1)]);
    await catalogue.refresh();
    const { marketAdmission } = setup(
      { maxPrivateTargetsPerConnection: 1_000, lookupsPerSecond: 1 },
      catalogue,
    );
    const a = subscriber();
    marketAdmission.open(a, undefined);
    const candles = (i: number) => `${marketId(i)}:1m:trades`;
    const ids = [candles(1), ...Array.from({ length: 15 }, (_, i) => candles(100 + i))];
    const refused = marketAdmission.admit(a, 'candles', ids);
    expect(refused.has(candles(1))).toBe(false);
    // A burst of ten lookups, as for market ids; the other five unknown_market at once.
    expect([...refused.values()].map((refusal) => refusal.code)).toEqual(Array(5).fill('unknown_market'));
  });

  it('forgets a closed connection', () => {
    const { marketAdmission, subscribe } = setup({ maxPrivateTargetsPerKey: 1 });
    const a = subscriber();
    marketAdmission.open(a, 'k');
    marketAdmission.close(a);
    // Unknown connections (never opened) are not limited per key or by rate.
    expect(subscribe(a, [1, 2].map(marketId)).size).toBe(0);
  });

  it('counts the connections of one API key as one owner in the fair share, others by address group or as themselves', () => {
    const { marketAdmission } = setup();
    const [a, b, c, d, e] = [subscriber(), subscriber(), subscriber(), subscriber(), subscriber()];
    marketAdmission.open(a, 'key-1', '10.0.0.1');
    marketAdmission.open(b, 'key-1', '10.0.0.2');
    marketAdmission.open(c, undefined);
    marketAdmission.open(d, undefined, '2001:db8::/64');
    marketAdmission.open(e, undefined, '2001:db8::/64');
    // Named by a digest of the key, never the key itself (the name is shown on the status page).
    expect(marketAdmission.shareOwner(a)).toMatch(/^key [0-9a-f]{8}$/);
    expect(String(marketAdmission.shareOwner(a))).not.toContain('key-1');
    expect(marketAdmission.shareOwner(b)).toBe(marketAdmission.shareOwner(a));
    expect(marketAdmission.shareOwner(c)).toBe(c);
    expect(marketAdmission.shareOwner(d)).toBe('address 2001:db8::/64');
    expect(marketAdmission.shareOwner(e)).toBe(marketAdmission.shareOwner(d));
    // A wildcard's own subscriber counts as its connection.
    expect(marketAdmission.shareOwner({ ...subscriber(), internal: true, behalfOf: d })).toBe(
      marketAdmission.shareOwner(d),
    );
    marketAdmission.close(a);
    expect(marketAdmission.shareOwner(a)).toBe(a);
  });
});
