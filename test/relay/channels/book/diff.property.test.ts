import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  applyBookUpdate,
  type BookState,
  bookChecksum,
  REMOVED_SIZE,
} from '../../../../packages/protocol/src/protocol/book.ts';
import { compareDecimals } from '../../../../packages/protocol/src/protocol/decimal.ts';
import type { BookDepth, Level } from '../../../../packages/protocol/src/protocol/messages.ts';
import { diffBook, limitDepth } from '../../../../src/relay/channels/book/codec.ts';
import { aggregateBook } from '../../../../src/relay/channels/book/levels.ts';
import type { OrderBook, OrderEntry } from '../../../../src/upstream/schemas.ts';
import { propertyRuns } from '../../../support/property-runs.ts';

// ------------------------------------------------------------------------------------------------
// Generators: successive upstream books on a small price grid, so that levels collide, persist,
// resize and vanish between polls.

const GRID = 90;
/** Grid step i as a price with 8 decimal places: 0.015 * (i + 1), so 0.015 .. 1.35. */
const gridPrice = (step: number): string => {
  const scaled = String(1_500_000 * (step + 1)).padStart(9, '0');
  return `${scaled.slice(0, -8)}.${scaled.slice(-8)}`;
};
/**
 * Mostly upstream's usual text; sometimes another spelling of the same price that its form
 * (`-?\d+\.\d{8}`) allows: a leading zero.
 */
const price = fc
  .tuple(fc.nat(GRID - 1), fc.nat(9))
  .map(([step, spelling]) => (spelling === 0 ? `0${gridPrice(step)}` : gridPrice(step)));
const size = fc.oneof(
  { weight: 1, arbitrary: fc.constantFrom('0', '0.00') },
  {
    weight: 9,
    arbitrary: fc
      .tuple(fc.nat(500), fc.stringMatching(/^\d{0,6}$/))
      .map(([integer, fraction]) => (fraction === '' ? String(integer) : `${integer}.${fraction}`)),
  },
);
const order = fc.record({ id: fc.string({ maxLength: 4 }), price, size, token_id: fc.constant(1) });
const orders = fc.array(order, { maxLength: 120 });

const book = (bids: OrderEntry[], asks: OrderEntry[], last_price: string): OrderBook => ({
  market_id: '3f0c5a4e-8b7d-4c1a-9e2f-1a2b3c4d5e6f',
  bids,
  asks,
  last_price,
  timestamp: '2025-01-01T00:00:00.000Z',
});
const freshBook = fc.tuple(orders, orders, fc.nat(GRID - 1)).map(([b, a, l]) => book(b, a, gridPrice(l)));

/** A step to the next poll: a fresh book, the same book again, or a few orders in and out. */
type Step =
  | { kind: 'fresh'; next: OrderBook }
  | { kind: 'same' }
  | { kind: 'tweak'; drop: number[]; bids: OrderEntry[]; asks: OrderEntry[]; lastPrice: string | null };
const step: fc.Arbitrary<Step> = fc.oneof(
  freshBook.map((next): Step => ({ kind: 'fresh', next })),
  fc.constant<Step>({ kind: 'same' }),
  fc
    .record({
      drop: fc.array(fc.nat(), { maxLength: 10 }),
      bids: fc.array(order, { maxLength: 8 }),
      asks: fc.array(order, { maxLength: 8 }),
      lastPrice: fc.option(fc.nat(GRID - 1).map(gridPrice), { nil: null }),
    })
    .map((t): Step => ({ kind: 'tweak', ...t })),
);

const applyStep = (prev: OrderBook, s: Step): OrderBook => {
  if (s.kind === 'fresh') return s.next;
  if (s.kind === 'same') return structuredClone(prev);
  const dropped = (list: OrderEntry[]) => {
    const gone = new Set(s.drop.map((n) => n % Math.max(1, list.length)));
    return list.filter((_, i) => !gone.has(i));
  };
  return book(
    [...dropped(prev.bids), ...s.bids],
    [...s.asks, ...dropped(prev.asks)],
    s.lastPrice ?? prev.last_price,
  );
};

const depths: BookDepth[] = [null, 10, 50];

// ------------------------------------------------------------------------------------------------
// Independent references: BigInt arithmetic, no code shared with the implementation.

const placesOf = (value: string): number => {
  const dot = value.indexOf('.');
  return dot === -1 ? 0 : value.length - dot - 1;
};
const toUnits = (value: string, scale: number): bigint => {
  const [integer = '0', fraction = ''] = value.split('.');
  return BigInt(integer + fraction.padEnd(scale, '0'));
};
const fromUnits = (units: bigint, scale: number): string => {
  const digits = units.toString().padStart(scale + 1, '0');
  return scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
};
const PRICE_SCALE = 8;

/** Group by exact price value, sum in BigInt, print with the most precise order's places. */
const referenceSide = (list: OrderEntry[], bestFirst: 'desc' | 'asc'): Level[] => {
  const groups = new Map<bigint, { text: string; sizes: string[] }>();
  for (const o of list) {
    const key = toUnits(o.price, PRICE_SCALE);
    const group = groups.get(key);
    if (group) group.sizes.push(o.size);
    else groups.set(key, { text: o.price, sizes: [o.size] });
  }
  const levels: [bigint, Level][] = [];
  for (const [key, { text, sizes }] of groups) {
    const scale = Math.max(...sizes.map(placesOf));
    const total = sizes.reduce((sum, s) => sum + toUnits(s, scale), 0n);
    if (total === 0n) continue;
    const sizeText = sizes.length === 1 ? sizes[0]! : fromUnits(total, scale);
    levels.push([key, [text, sizeText]]);
  }
  levels.sort(([x], [y]) => (x === y ? 0 : x < y === (bestFirst === 'asc') ? -1 : 1));
  return levels.map(([, level]) => level);
};

const expectStrictlyBestFirst = (state: BookState) => {
  for (let i = 1; i < state.bids.length; i++) {
    expect(compareDecimals(state.bids[i - 1]![0], state.bids[i]![0])).toBeGreaterThan(0);
  }
  for (let i = 1; i < state.asks.length; i++) {
    expect(compareDecimals(state.asks[i - 1]![0], state.asks[i]![0])).toBeLessThan(0);
  }
};

/** Every level in an update is a real change against the state it applies to. */
const expectOnlyChanges = (levels: readonly Level[], side: readonly Level[]) => {
  for (const [p, s] of levels) {
    const held = side.find(([q]) => compareDecimals(p, q) === 0);
    if (s === REMOVED_SIZE) expect(held).toBeDefined();
    else expect(held === undefined || held[0] !== p || held[1] !== s).toBe(true);
  }
};

describe('book pipeline properties', () => {
  it('aggregateBook matches a BigInt reference aggregation', () => {
    fc.assert(
      fc.property(freshBook, (b) => {
        const state = aggregateBook(b);
        expect(state.bids).toEqual(referenceSide(b.bids, 'desc'));
        expect(state.asks).toEqual(referenceSide(b.asks, 'asc'));
        expect(state.last_price).toBe(b.last_price);
        expectStrictlyBestFirst(state);
      }),
      { numRuns: propertyRuns(200) },
    );
  });

  it("aggregates books listed best first (upstream's usual order) as any other, to any depth", () => {
    const bestFirst = (list: OrderEntry[], side: 'desc' | 'asc') =>
      [...list].sort((x, y) => (side === 'desc' ? -1 : 1) * compareDecimals(x.price, y.price));
    fc.assert(
      fc.property(freshBook, fc.boolean(), fc.constantFrom(...depths), (b, sorted, depth) => {
        const listed = sorted ? { ...b, bids: bestFirst(b.bids, 'desc'), asks: bestFirst(b.asks, 'asc') } : b;
        const state = aggregateBook(listed);
        expect(state.bids).toEqual(referenceSide(listed.bids, 'desc'));
        expect(state.asks).toEqual(referenceSide(listed.asks, 'asc'));
        expect(aggregateBook(listed, depth)).toEqual(limitDepth(state, depth));
      }),
      { numRuns: propertyRuns(300) },
    );
  });

  it('applying each diff reproduces the next state, its order and its checksum, at every depth', () => {
    fc.assert(
      fc.property(freshBook, fc.array(step, { minLength: 1, maxLength: 6 }), (first, steps) => {
        const books = [first];
        for (const s of steps) books.push(applyStep(books[books.length - 1]!, s));
        for (const depth of depths) {
          // `client` is only ever advanced by applying updates, as the client SDK does.
          let client = limitDepth(aggregateBook(books[0]!), depth);
          for (const upstream of books.slice(1)) {
            const next = limitDepth(aggregateBook(upstream), depth);
            const update = diffBook(client, next);
            if (update === null) {
              expect(next).toStrictEqual(client);
              continue;
            }
            expect(next).not.toStrictEqual(client);
            expectOnlyChanges(update.bids, client.bids);
            expectOnlyChanges(update.asks, client.asks);
            expectStrictlyBestFirst(update);
            const applied = applyBookUpdate(client, update);
            expect(applied).toStrictEqual(next);
            expectStrictlyBestFirst(applied);
            if (depth !== null) {
              expect(applied.bids.length).toBeLessThanOrEqual(depth);
              expect(applied.asks.length).toBeLessThanOrEqual(depth);
            }
            expect(bookChecksum(applied)).toBe(bookChecksum(next));
            client = applied;
          }
        }
      }),
      { numRuns: propertyRuns(150) },
    );
  });
});
