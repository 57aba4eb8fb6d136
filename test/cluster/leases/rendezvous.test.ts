/** Rendezvous hashing of targets over live relays: agreed by all, balanced, and moving little. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { preferredRelay } from '../../../src/relay/coordination/redis/leases/rendezvous.ts';

const relayId = fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 16, maxLength: 16 });
const relayIds = fc.uniqueArray(relayId, { minLength: 1, maxLength: 8 });

describe('preferredRelay', () => {
  it('picks one of the relays, whatever their order', () => {
    fc.assert(
      fc.property(relayIds, fc.string(), (relays, target) => {
        const chosen = preferredRelay(target, relays);
        expect(relays).toContain(chosen);
        expect(preferredRelay(target, [...relays].reverse())).toBe(chosen);
      }),
    );
    expect(preferredRelay('book:m', [])).toBeUndefined();
  });

  it('moves only the targets of a relay that leaves, and gives a joining relay only targets it takes', () => {
    fc.assert(
      fc.property(relayIds, relayId, (relays, joining) => {
        fc.pre(!relays.includes(joining));
        for (let i = 0; i < 50; i += 1) {
          const target = `book:market-${i}`;
          const before = preferredRelay(target, relays);
          const after = preferredRelay(target, [...relays, joining]);
          expect(after === before || after === joining).toBe(true);
        }
      }),
    );
  });

  it('spreads 300 targets over 3 relays within a third of an even share', () => {
    const relays = ['5f1c0a9e3b2d4c61', 'a07e4d2c9b815f33', '0c9d8e7f6a5b4c3d'];
    const counts = new Map<string, number>();
    for (let i = 0; i < 300; i += 1) {
      const chosen = preferredRelay(`book:market-${i}`, relays)!;
      counts.set(chosen, (counts.get(chosen) ?? 0) + 1);
    }
    for (const relay of relays) expect(counts.get(relay)).toBeGreaterThan(67);
  });
});

const weight = fc.double({ min: 0.5, max: 2, noNaN: true });
const targets = Array.from({ length: 300 }, (_, i) => `book:market-${i}`);
const weighted = fc
  .uniqueArray(relayId, { minLength: 2, maxLength: 6 })
  .chain((relays) =>
    fc.tuple(fc.constant(relays), fc.array(weight, { minLength: relays.length, maxLength: relays.length })),
  );

function byWeights(relays: string[], weights: number[]): (relay: string) => number {
  return (relay) => weights[relays.indexOf(relay)] ?? 1;
}

describe('preferredRelay with weights', () => {
  it('picks exactly one of the live relays, whatever their order', () => {
    fc.assert(
      fc.property(weighted, fc.string(), ([relays, weights], target) => {
        const chosen = preferredRelay(target, relays, byWeights(relays, weights));
        expect(relays).toContain(chosen);
        expect(preferredRelay(target, [...relays].reverse(), byWeights(relays, weights))).toBe(chosen);
      }),
    );
  });

  it('with equal weights, picks what unweighted hashing picks', () => {
    fc.assert(
      fc.property(relayIds, weight, (relays, equal) => {
        for (const target of targets.slice(0, 50))
          expect(preferredRelay(target, relays, () => equal)).toBe(preferredRelay(target, relays));
      }),
    );
  });

  it('never gives a relay a target when its weight is lowered, and moves targets only away from it', () => {
    fc.assert(
      fc.property(weighted, fc.double({ min: 0.1, max: 1, noNaN: true }), ([relays, weights], factor) => {
        const lowered = weights.map((value, i) => (i === 0 ? value * factor : value));
        for (const target of targets.slice(0, 100)) {
          const before = preferredRelay(target, relays, byWeights(relays, weights));
          const after = preferredRelay(target, relays, byWeights(relays, lowered));
          if (after === relays[0]) expect(before).toBe(relays[0]);
          if (before !== relays[0]) expect(after).toBe(before);
        }
      }),
    );
  });

  it('moves few targets when one weight changes a little', () => {
    fc.assert(
      fc.property(weighted, fc.double({ min: 0.95, max: 1.05, noNaN: true }), ([relays, weights], factor) => {
        const changed = weights.map((value, i) => (i === 0 ? value * factor : value));
        const moved = targets.filter(
          (target) =>
            preferredRelay(target, relays, byWeights(relays, weights)) !==
            preferredRelay(target, relays, byWeights(relays, changed)),
        ).length;
        // Expected: about 5% of the relay's share at most; 10% of all targets is far beyond.
        expect(moved).toBeLessThanOrEqual(targets.length / 10);
      }),
      { numRuns: 50 },
    );
  });

  it('gives a relay of half weight about half the share of the others', () => {
    const [light, ...even] = ['5f1c0a9e3b2d4c61', 'a07e4d2c9b815f33', '0c9d8e7f6a5b4c3d'] as const;
    const relays = [light, ...even];
    const counts = new Map<string, number>();
    for (let i = 0; i < 3_000; i += 1) {
      const chosen = preferredRelay(`book:market-${i}`, relays, (relay) => (relay === light ? 0.5 : 1))!;
      counts.set(chosen, (counts.get(chosen) ?? 0) + 1);
    }
    // Shares 1/5, 2/5, 2/5: 600, 1200, 1200.
    expect(counts.get(light)).toBeGreaterThan(450);
    expect(counts.get(light)).toBeLessThan(750);
    for (const relay of even) expect(counts.get(relay)).toBeGreaterThan(1_000);
  });
});
