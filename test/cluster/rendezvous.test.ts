/** Rendezvous hashing of targets over live relays: agreed by all, balanced, and moving little. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { preferredRelay } from '../../src/cluster/rendezvous.ts';

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
