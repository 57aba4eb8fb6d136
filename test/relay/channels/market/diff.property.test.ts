import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyMarketUpdate } from '../../../../packages/protocol/src/channels/market/wire.ts';
import { applyMarketsUpdate } from '../../../../packages/protocol/src/channels/markets/wire.ts';
import { applyOracleUpdate } from '../../../../packages/protocol/src/channels/oracle/oracle.ts';
import { applyProbabilitiesUpdate } from '../../../../packages/protocol/src/channels/probabilities/probabilities.ts';
import {
  applyTradesUpdate,
  TRADES_SNAPSHOT_SIZE,
} from '../../../../packages/protocol/src/channels/trades/trades.ts';
import type {
  MarketData,
  MarketsData,
  OracleData,
  OrderEntry,
  OrdersData,
  ProbabilitiesData,
  TradeEntry,
} from '../../../../packages/protocol/src/protocol/messages.ts';
import { diffMarket } from '../../../../src/relay/channels/market/diff.ts';
import { diffMarkets } from '../../../../src/relay/channels/markets/diff.ts';
import { diffOracle } from '../../../../src/relay/channels/oracle/relay.ts';
import { diffOrders } from '../../../../src/relay/channels/orders/relay.ts';
import { diffProbabilities } from '../../../../src/relay/channels/probabilities/relay.ts';
import { diffTrades } from '../../../../src/relay/channels/trades/relay.ts';
import { applyOrdersUpdate } from '../../../support/channels/orders-state.ts';

// Small key spaces, so that successive states share, change and lose entries.
// `__proto__` (JSON from the wire or upstream may carry it) must stay an ordinary key.
const key = fc.constantFrom('a', 'b', 'c', 'd', 'e', '__proto__');
const decimal = fc.nat(1000).map((n) => (n / 100).toFixed(2));

const jsonValue = fc.oneof(
  fc.string({ maxLength: 3 }),
  fc.integer({ min: -3, max: 3 }),
  fc.boolean(),
  fc.array(fc.integer({ min: 0, max: 2 }), { maxLength: 2 }),
  fc.dictionary(key, fc.integer({ min: 0, max: 2 }), { maxKeys: 2 }),
);
const market: fc.Arbitrary<MarketData> = fc.dictionary(key, jsonValue, { maxKeys: 6 });

const probability = fc.record({
  midpoint: fc.constantFrom(0.1, 0.5, 0.9),
  best_bid: fc.constantFrom(0.1, 0.4),
  best_ask: fc.constantFrom(0.6, 0.9),
  last_trade_price: fc.constantFrom(0.5, 0.55),
  timestamp: fc.constantFrom('2026-01-01T00:00:00.000Z', '2026-01-01T00:00:01.000Z'),
});
const probabilities: fc.Arbitrary<ProbabilitiesData> = fc.dictionary(key, probability, { maxKeys: 6 });

const oracle: fc.Arbitrary<OracleData> = fc.record({
  feed_id: fc.constant('0xabc'),
  price: fc.double({ noNaN: true, min: 0, max: 100 }),
  raw_price: fc.nat().map(String),
  expo: fc.constant(-8),
  publish_time: fc.integer({ min: 1_700_000_000, max: 1_700_000_010 }),
});

const order: fc.Arbitrary<OrderEntry> = fc.record({
  id: key,
  price: decimal,
  size: decimal,
  token_id: fc.constantFrom(1, 2),
});
/** Upstream lists each order once. */
const orders: fc.Arbitrary<OrdersData> = fc
  .tuple(fc.array(order, { maxLength: 6 }), fc.array(order, { maxLength: 6 }))
  .map(([bids, asks]) => {
    const seen = new Set<string>();
    const once = (entry: OrderEntry) => !seen.has(entry.id) && seen.add(entry.id) !== undefined;
    return { bids: bids.filter(once), asks: asks.filter(once) };
  });

/** Orders as a client keeps them: per side, by id (the order within a side is the client's own). */
function byId(state: OrdersData) {
  const side = (entries: OrderEntry[]) => Object.fromEntries(entries.map((entry) => [entry.id, entry]));
  return { bids: side(state.bids), asks: side(state.asks) };
}

describe('channel diffs rebuild the next state when applied (property)', () => {
  it('market: changed fields, null for a field gone', () => {
    fc.assert(
      fc.property(market, market, (prev, next) => {
        const update = diffMarket(prev, next);
        expect(update === null ? prev : applyMarketUpdate(prev, update)).toEqual(next);
      }),
    );
  });

  it('probabilities: changed entries whole, null for a market gone', () => {
    fc.assert(
      fc.property(probabilities, probabilities, (prev, next) => {
        const update = diffProbabilities(prev, next);
        expect(update === null ? prev : applyProbabilitiesUpdate(prev, update)).toEqual(next);
        for (const [id, entry] of Object.entries(update ?? {}))
          expect(entry).toEqual(Object.hasOwn(next, id) ? next[id] : null);
      }),
    );
  });

  it('markets: records new or changed whole, null for a market gone, nothing for the same catalogue', () => {
    const catalogue = fc.dictionary(key, market, { maxKeys: 6 });
    fc.assert(
      fc.property(catalogue, catalogue, (prev, next) => {
        const update = diffMarkets(prev, next);
        expect(update === null ? prev : applyMarketsUpdate(prev, update)).toEqual(next);
        for (const [id, record] of Object.entries(update ?? {})) {
          expect(record).toEqual(Object.hasOwn(next, id) ? next[id] : null);
          if (Object.hasOwn(prev, id) && record !== null) expect(record).not.toEqual(prev[id]);
        }
        expect(diffMarkets(next, structuredClone(next))).toBeNull();
      }),
    );
  });

  it('markets: a record whose own key is __proto__ is not the same as one with another key', () => {
    // Found by the property above: `'__proto__' in record` holds for every object, and its value
    // there is the prototype, an empty object to a comparison of own keys.
    const prev = JSON.parse('{"c":{"__proto__":{}}}') as MarketsData;
    const next = { c: { a: [] } } as MarketsData;
    expect(diffMarkets(prev, next)).toEqual(next);
    expect(diffMarkets(next, prev)).toEqual(prev);
  });

  it('oracle: the whole record exactly when the publish time advances', () => {
    fc.assert(
      fc.property(oracle, oracle, (prev, next) => {
        const update = diffOracle(prev, next);
        if (next.publish_time > prev.publish_time) expect(applyOracleUpdate(prev, update!)).toEqual(next);
        else expect(update).toBeNull();
      }),
    );
  });

  it('orders: upserts and removes by id rebuild every side', () => {
    fc.assert(
      fc.property(orders, orders, (prev, next) => {
        const update = diffOrders(prev, next);
        const rebuilt = update === null ? prev : applyOrdersUpdate(prev, update);
        expect(byId(rebuilt)).toEqual(byId(next));
      }),
    );
  });

  it('trades: only the new entries, oldest first; the client keeps the most recent', () => {
    const trade = (n: number): TradeEntry => ({
      activity_id: `t${n}`,
      activity_type: 'TRADE',
      price: '0.50',
      size: '1.00',
      total_value: '0.50',
      activity_timestamp: new Date(1_700_000_000_000 + n * 1000).toISOString(),
    });
    // The stream's states: the most recent entries of one growing history.
    const history = fc.tuple(fc.nat(120), fc.nat(80), fc.nat(80)).map(([start, first, more]) => ({
      prev: range(start, start + first)
        .map(trade)
        .slice(-TRADES_SNAPSHOT_SIZE),
      next: range(start, start + first + more)
        .map(trade)
        .slice(-TRADES_SNAPSHOT_SIZE),
    }));
    fc.assert(
      fc.property(history, ({ prev, next }) => {
        const update = diffTrades({ trades: prev }, { trades: next });
        const rebuilt = update === null ? { trades: prev } : applyTradesUpdate({ trades: prev }, update);
        expect(rebuilt).toEqual({ trades: next });
        const ids = update?.trades.map((entry) => entry.activity_id) ?? [];
        expect(ids.every((id) => !prev.some((entry) => entry.activity_id === id))).toBe(true);
      }),
    );
  });

  it('no update for an unchanged state', () => {
    fc.assert(
      fc.property(market, probabilities, orders, (record, map, book) => {
        expect(diffMarket(record, structuredClone(record))).toBeNull();
        expect(diffProbabilities(map, structuredClone(map))).toBeNull();
        expect(diffOrders(book, structuredClone(book))).toBeNull();
      }),
    );
  });

  it('probabilities: a field upstream adds is part of the entry, its change an update', () => {
    const entry = { midpoint: 0.5, best_bid: 0.4, best_ask: 0.6, last_trade_price: 0.5, timestamp: 'T' };
    const prev: ProbabilitiesData = { m: { ...entry, venue: 'a' } as ProbabilitiesData[string] };
    const next: ProbabilitiesData = { m: { ...entry, venue: 'b' } as ProbabilitiesData[string] };
    expect(diffProbabilities(prev, next)).toEqual({ m: next.m });
    expect(diffProbabilities(prev, { m: { ...entry } })).toEqual({ m: entry });
    expect(diffProbabilities(next, structuredClone(next))).toBeNull();
  });
});

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from }, (_, i) => from + i);
}
