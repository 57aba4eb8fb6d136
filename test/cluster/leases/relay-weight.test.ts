/** A relay's weight from the poll CPU it and the cluster announce: bounded, steady, and toward even CPU. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  EVEN_WEIGHT,
  MAX_WEIGHT,
  MIN_WEIGHT,
  nextWeight,
  PollCostMeter,
  parseWeight,
  type RelayWeight,
} from '../../../src/relay/coordination/redis/leases/relay-weight.ts';

const cost = fc.record({
  pollCpu: fc.double({ min: 0, max: 1e7, noNaN: true }),
  leases: fc.integer({ min: 0, max: 10_000 }),
});
const state = fc
  .tuple(
    fc.double({ min: MIN_WEIGHT, max: MAX_WEIGHT, noNaN: true }),
    fc.double({ min: MIN_WEIGHT, max: MAX_WEIGHT, noNaN: true }),
  )
  .map(([weight, smoothed]): RelayWeight => ({ weight, smoothed }));

/** The weight after `rounds` announcements at the same costs, from even. */
function settle(
  own: { pollCpu: number; leases: number },
  cluster: { pollCpu: number; leases: number },
  rounds = 30,
) {
  let weight = EVEN_WEIGHT;
  for (let i = 0; i < rounds; i += 1) weight = nextWeight(weight, own, cluster);
  return weight.weight;
}

describe('nextWeight', () => {
  it('stays within its bounds, whatever is announced', () => {
    fc.assert(
      fc.property(state, cost, cost, (previous, own, cluster) => {
        const next = nextWeight(previous, own, cluster);
        for (const value of [next.weight, next.smoothed]) {
          expect(value).toBeGreaterThanOrEqual(MIN_WEIGHT);
          expect(value).toBeLessThanOrEqual(MAX_WEIGHT);
        }
      }),
    );
  });

  it('stays as it is without evidence: no leases or no CPU measured', () => {
    fc.assert(
      fc.property(state, cost, (previous, cluster) => {
        expect(nextWeight(previous, { pollCpu: 0, leases: 5 }, cluster)).toEqual(previous);
        expect(nextWeight(previous, { pollCpu: 100, leases: 0 }, cluster)).toEqual(previous);
        expect(nextWeight(previous, { pollCpu: 100, leases: 5 }, { pollCpu: 0, leases: 0 })).toEqual(
          previous,
        );
      }),
    );
  });

  it('is lower for a relay whose leases cost more, and ends below even when they cost more than average', () => {
    fc.assert(
      fc.property(
        state,
        fc.integer({ min: 1, max: 100 }),
        fc.double({ min: 1.5, max: 100, noNaN: true }),
        (previous, leases, ratio) => {
          const cluster = { pollCpu: 1_000 * 3 * leases, leases: 3 * leases };
          const expensive = { pollCpu: 1_000 * ratio * leases, leases };
          const cheap = { pollCpu: (1_000 / ratio) * leases, leases };
          expect(nextWeight(previous, expensive, cluster).smoothed).toBeLessThanOrEqual(
            nextWeight(previous, cheap, cluster).smoothed,
          );
          expect(settle(expensive, cluster)).toBeLessThan(1);
          expect(settle(cheap, cluster)).toBeGreaterThan(1);
        },
      ),
    );
  });

  it('does not move for noise: costs within 10% of the average keep an even weight', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0.9, max: 1.1, noNaN: true }), { minLength: 1, maxLength: 50 }),
        (ratios) => {
          let weight = EVEN_WEIGHT;
          for (const ratio of ratios)
            weight = nextWeight(
              weight,
              { pollCpu: 1_000 * ratio, leases: 10 },
              { pollCpu: 3_000, leases: 30 },
            );
          expect(weight.weight).toBe(1);
        },
      ),
    );
  });

  it('settles near the average cost per lease over its own, so every relay spends about the same CPU', () => {
    // Leases twice as costly as the average: about half the weight.
    const halved = settle({ pollCpu: 2_000, leases: 10 }, { pollCpu: 4_000, leases: 40 });
    // Within the dead band of 0.5.
    expect(halved).toBeGreaterThanOrEqual(0.5);
    expect(halved).toBeLessThanOrEqual(0.5 * 1.25 + 0.01);
    expect(settle({ pollCpu: 700, leases: 10 }, { pollCpu: 4_000, leases: 40 })).toBeGreaterThan(1.2);
    // Ten times as costly: at the lower bound (within the dead band), no further.
    const bounded = settle({ pollCpu: 10_000, leases: 10 }, { pollCpu: 12_000, leases: 30 });
    expect(bounded).toBeGreaterThanOrEqual(MIN_WEIGHT);
    expect(bounded).toBeLessThanOrEqual(MIN_WEIGHT * 1.25 + 0.01);
  });
});

describe('PollCostMeter', () => {
  it('divides by the leases held while the CPU was spent, not by those held at the end', () => {
    const meter = new PollCostMeter(0);
    meter.holding(10, 0);
    meter.spent(2);
    // Half the window holding 10, half holding 2 (eight handed over): 6 on average.
    meter.holding(2, 500);
    meter.spent(2);
    expect(meter.take(1_000)).toEqual({ pollCpu: 4_000, leases: 6 });
    // The next window starts afresh, holding the 2.
    meter.spent(1);
    expect(meter.take(2_000)).toEqual({ pollCpu: 1_000, leases: 2 });
  });

  it('makes a relay that hands leases over at an even cost per poll keep an even weight', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 2, maxLength: 20 }), (counts) => {
        // Every lease costs 1 ms per 100 ms window step, wherever it is held: an even cost.
        const meter = new PollCostMeter(0);
        counts.forEach((leases, step) => {
          meter.holding(leases, step * 100);
          meter.spent(leases);
        });
        const own = meter.take(counts.length * 100);
        // A cluster of 30 leases at the same cost: 10 ms a second each, 10,000 per 1,000 s.
        const next = nextWeight(EVEN_WEIGHT, own, { pollCpu: 30 * 10_000, leases: 30 });
        expect(next.weight).toBe(1);
        expect(next.smoothed).toBeCloseTo(1, 3);
      }),
    );
  });
});

describe('parseWeight', () => {
  it('reads a weight a relay announced, and counts one that announced none or nonsense as even', () => {
    expect(parseWeight('0.75')).toBe(0.75);
    expect(parseWeight('9')).toBe(MAX_WEIGHT);
    for (const text of [undefined, '', 'abc', '-1', '0', 'NaN', 'Infinity'])
      expect(parseWeight(text)).toBe(1);
  });
});
