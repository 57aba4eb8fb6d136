/**
 * The `history` benchmark's recording arms (bench/history/arm-figures.ts): every arm runs once a
 * round in a rotated order, and the figures pair each recording arm with the `off` arm of its own
 * round, so that the shared store's added cost over the embedded store's is one ratio.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type Arm,
  type ArmSample,
  armOrder,
  sharedOverEmbedded,
  storeFigures,
} from '../../bench/history/arm-figures.ts';

const sample = (arm: Arm, round: number, cpuPerMessageUs: number, loopDelayP99Ms = 1): ArmSample => ({
  arm,
  round,
  cpuPerMessageUs,
  loopDelayP99Ms,
});

describe('the recording arms', () => {
  it('runs every arm once a round, each arm first in some round', () => {
    const arms: Arm[] = ['off', 'embedded', 'postgres'];
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50 }), (round) => {
        expect([...armOrder(arms, round)].sort()).toEqual([...arms].sort());
      }),
    );
    expect([1, 2, 3].map((round) => armOrder(arms, round)[0])).toEqual(['off', 'embedded', 'postgres']);
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
    expect(figures.embedded?.addedCpuUs).toBeCloseTo(0.5, 9);
    expect(figures.postgres?.addedCpuUs).toBeCloseTo(0.6, 9);
    expect(figures.embedded?.cpuRatio).toBeCloseTo(20.5 / 20, 9);
    expect(figures.embedded?.cpuRatioRange[1]).toBeCloseTo(1.05, 9);
    expect(figures.embedded?.loopDelayP99AddedMs).toBeCloseTo(0, 9);
    expect(sharedOverEmbedded(figures)).toBeCloseTo(1.2, 9);
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
