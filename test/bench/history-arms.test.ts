/**
 * The `history` benchmark's recording arms (bench/history/arm-figures.ts): every arm runs once a
 * round, a run taking every start order equally often; the figures pair each recording
 * arm with the `off` arm of its own round and average over the rounds, so that the shared store's
 * added cost over the embedded store's is one ratio and no arm's start place weighs.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type Arm,
  type ArmSample,
  armOrder,
  sharedOverEmbedded,
  storeFigures,
  wholeOrderSets,
} from '../../bench/history/arm-figures.ts';

const sample = (arm: Arm, round: number, cpuPerMessageUs: number, loopDelayP99Ms = 1): ArmSample => ({
  arm,
  round,
  cpuPerMessageUs,
  loopDelayP99Ms,
});

describe('the recording arms', () => {
  it('runs every arm once a round, and every start order once in each set of rounds', () => {
    const arms: Arm[] = ['off', 'embedded', 'postgres'];
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50 }), (round) => {
        expect([...armOrder(arms, round)].sort()).toEqual([...arms].sort());
      }),
    );
    const set = [1, 2, 3, 4, 5, 6].map((round) => armOrder(arms, round).join(' '));
    expect(new Set(set).size).toBe(6);
    expect(armOrder(arms, 7)).toEqual(armOrder(arms, 1));
    // Each arm before each other arm in half of the rounds.
    const startsBefore = (a: Arm, b: Arm) =>
      [1, 2, 3, 4, 5, 6].filter((round) => {
        const order = armOrder(arms, round);
        return order.indexOf(a) < order.indexOf(b);
      }).length;
    expect([
      startsBefore('off', 'embedded'),
      startsBefore('embedded', 'postgres'),
      startsBefore('off', 'postgres'),
    ]).toEqual([3, 3, 3]);
    expect([1, 2].map((round) => armOrder(['off', 'embedded'], round))).toEqual([
      ['off', 'embedded'],
      ['embedded', 'off'],
    ]);
  });

  it("pairs each recording arm with its round's off arm and gives the shared store's added cost over the embedded's", () => {
    const samples = [
      sample('off', 1, 10, 1),
      sample('embedded', 1, 10.5, 1.2),
      sample('postgres', 1, 10.6, 1.1),
      // A busier round: every arm slower, the same added costs.
      sample('postgres', 2, 20.6),
      sample('off', 2, 20),
      sample('embedded', 2, 20.5),
      sample('embedded', 3, 30.4),
      sample('off', 3, 30),
      sample('postgres', 3, 30.8),
    ];
    const figures = storeFigures(samples);
    expect(figures.embedded?.addedCpuUs).toBeCloseTo((0.5 + 0.5 + 0.4) / 3, 9);
    expect(figures.postgres?.addedCpuUs).toBeCloseTo((0.6 + 0.6 + 0.8) / 3, 9);
    // The geometric mean of the rounds' ratios.
    expect(figures.embedded?.cpuRatio).toBeCloseTo(Math.cbrt((10.5 / 10) * (20.5 / 20) * (30.4 / 30)), 9);
    expect(figures.embedded?.cpuRatioRange[1]).toBeCloseTo(1.05, 9);
    expect(figures.embedded?.loopDelayP99AddedMs).toBeCloseTo(0.2 / 3, 9);
    expect(sharedOverEmbedded(figures)).toBeCloseTo(2 / 1.4, 9);
  });

  it('cancels a start-place bias: each arm started first and second equally often', () => {
    // Whoever starts second costs 5 % more; recording costs nothing.
    const rounds = wholeOrderSets(3, 2);
    expect(rounds).toBe(4);
    const samples = Array.from({ length: rounds }, (_, index) => {
      const round = index + 1;
      const [first, second] = armOrder<Arm>(['off', 'embedded'], round);
      return [sample(first as Arm, round, 100), sample(second as Arm, round, 105)];
    }).flat();
    expect(storeFigures(samples).embedded?.cpuRatio).toBeCloseTo(1, 9);
    expect(storeFigures(samples).embedded?.addedCpuUs).toBeCloseTo(0, 9);
    expect(wholeOrderSets(6, 3)).toBe(6);
    expect(wholeOrderSets(7, 3)).toBe(12);
    expect(wholeOrderSets(1, 2)).toBe(2);
  });

  it('gives no ratio without both stores, and NaN when the embedded store adds nothing measurable', () => {
    const embeddedOnly = storeFigures([sample('off', 1, 10), sample('embedded', 1, 11)]);
    expect(embeddedOnly.postgres).toBeUndefined();
    expect(sharedOverEmbedded(embeddedOnly)).toBeUndefined();
    const noise = storeFigures([
      sample('off', 1, 10),
      sample('embedded', 1, 9.9),
      sample('postgres', 1, 10.2),
    ]);
    expect(sharedOverEmbedded(noise)).toBeNaN();
  });
});
