/**
 * The long soak's verdicts (bench/lib/long-soak/analysis.ts): the least-squares slope, a figure's
 * growth after the warm-up in % per hour, and the pass criteria of issue 51.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  eventLoopCriterion,
  flatCriterion,
  growthAfterWarmup,
  isFlat,
  leastSquaresSlope,
  type Point,
  slopeWithConnectionsHeld,
} from '../../bench/lib/long-soak/analysis.ts';
import { propertyRuns } from '../support/property-runs.ts';

/** Every 10 s from minute 0 to `minutes`, `value(minute)`. */
function sampled(minutes: number, value: (minute: number) => number): Point[] {
  return Array.from({ length: minutes * 6 + 1 }, (_, index) => ({
    minute: index / 6,
    value: value(index / 6),
  }));
}

describe('leastSquaresSlope', () => {
  it('finds the slope of points on a line, whatever the line and the sampling', () => {
    fc.assert(
      fc.property(
        fc.double({ min: -1e3, max: 1e3, noNaN: true }),
        fc.double({ min: -1e6, max: 1e6, noNaN: true }),
        fc.uniqueArray(fc.integer({ min: 0, max: 10_000 }), { minLength: 2, maxLength: 60 }),
        (slope, intercept, tenths) => {
          const points = tenths.map((tenth) => ({
            minute: tenth / 10,
            value: intercept + slope * (tenth / 10),
          }));
          expect(leastSquaresSlope(points)).toBeCloseTo(slope, 3);
        },
      ),
      { numRuns: propertyRuns(300) },
    );
  });

  it('is 0 for noise symmetric in time and NaN without two distinct minutes', () => {
    expect(
      leastSquaresSlope(sampled(10, (minute) => 50 + (Math.round(minute * 6) % 2 === 0 ? 3 : -3))),
    ).toBeCloseTo(0, 1);
    expect(leastSquaresSlope([{ minute: 1, value: 5 }])).toBeNaN();
    expect(
      leastSquaresSlope([
        { minute: 1, value: 5 },
        { minute: 1, value: 7 },
      ]),
    ).toBeNaN();
  });
});

describe('slopeWithConnectionsHeld', () => {
  it('separates growth in time from a figure that follows the connections', () => {
    fc.assert(
      fc.property(
        fc.double({ min: -10, max: 10, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.array(fc.integer({ min: 0, max: 2_000 }), { minLength: 20, maxLength: 60 }),
        (perMinute, perConnection, crowd) => {
          const points = crowd.map((connections, index) => ({
            minute: index / 6,
            connections,
            value: 40 + perMinute * (index / 6) + perConnection * connections,
          }));
          fc.pre(new Set(crowd).size > 2);
          expect(slopeWithConnectionsHeld(points)).toBeCloseTo(perMinute, 3);
        },
      ),
      { numRuns: propertyRuns(300) },
    );
  });

  it('takes a crowd larger at the end for no leak, and is the plain slope without connections', () => {
    // Heap = 40 MB + 20 kB per connection; the crowd grows from 200 to 900 over the run.
    const points = sampled(
      30,
      (minute) => 40 + 0.02 * (200 + 700 * (minute / 30) + (minute % 1 < 0.5 ? 50 : -50)),
    ).map((point) => ({ ...point, connections: (point.value - 40) / 0.02 }));
    expect(leastSquaresSlope(points)).toBeGreaterThan(0.4);
    expect(slopeWithConnectionsHeld(points)).toBeCloseTo(0, 6);
    const plain = sampled(30, (minute) => 3 * minute);
    expect(slopeWithConnectionsHeld(plain)).toBeCloseTo(3, 9);
    expect(slopeWithConnectionsHeld(plain.map((point) => ({ ...point, connections: 500 })))).toBeCloseTo(
      3,
      9,
    );
  });
});

describe('growthAfterWarmup', () => {
  it('expresses a steady growth in % of the warm-up value per hour, the warm-up left out', () => {
    // 100 at minute 5, +0.5 a minute after it (30 an hour = 30 %/h); wild during the warm-up.
    const points = sampled(30, (minute) => (minute < 5 ? 1_000 * Math.random() : 100 + 0.5 * (minute - 5)));
    const growth = growthAfterWarmup(points, 5);
    expect(growth.atWarmup).toBeCloseTo(100 + 0.5 * (0.5 / 2), 0);
    expect(growth.percentPerHour).toBeCloseTo(30, 0);
    expect(growth.endChangePercent).toBeCloseTo(12.3, 0);
    expect(isFlat(growth)).toBe(false);
  });

  it('calls a figure flat within 5 % at the end, or under 1 %/h fitted, and a shrinking one flat', () => {
    expect(
      isFlat(
        growthAfterWarmup(
          sampled(30, (minute) => 100 + 0.15 * minute),
          5,
        ),
      ),
    ).toBe(true);
    expect(
      isFlat(
        growthAfterWarmup(
          sampled(30, (minute) => 200 - minute),
          5,
        ),
      ),
    ).toBe(true);
    expect(
      isFlat(
        growthAfterWarmup(
          sampled(30, () => 0),
          5,
        ),
      ),
    ).toBe(true);
    // A 1 %/h leak over 30 minutes ends within 5 %: passes on the first test, as the issue allows.
    expect(
      isFlat(
        growthAfterWarmup(
          sampled(30, (minute) => 100 * (1 + minute / 6000)),
          5,
        ),
      ),
    ).toBe(true);
    // 10 % in 25 minutes fails both.
    expect(
      isFlat(
        growthAfterWarmup(
          sampled(30, (minute) => 100 + 0.4 * minute),
          5,
        ),
      ),
    ).toBe(false);
  });
});

describe('criteria', () => {
  it('passes a figure only when every relay’s series is flat', () => {
    const flat = sampled(30, () => 40);
    const leaking = sampled(30, (minute) => 40 + minute);
    expect(flatCriterion('heap', [flat, flat], 5).pass).toBe(true);
    expect(flatCriterion('heap', [flat, leaking], 5).pass).toBe(false);
    expect(flatCriterion('heap', [], 5).pass).toBe(false);
  });

  it('fails the event loop on one sample at 50 ms or more', () => {
    const quiet = sampled(30, () => 5);
    expect(eventLoopCriterion([quiet]).pass).toBe(true);
    expect(eventLoopCriterion([quiet, [...quiet, { minute: 31, value: 50 }]])).toMatchObject({
      pass: false,
      measured: 'worst 50.0 ms',
    });
    expect(eventLoopCriterion([]).pass).toBe(false);
  });

  it("names the samples over the limit with the machine's steal at each, once per minute", () => {
    const quiet = sampled(30, () => 5);
    const steal = sampled(31, (minute) => (minute === 31 ? 12.5 : 1));
    const spiky = [...quiet, { minute: 31, value: 80 }];
    expect(eventLoopCriterion([quiet, spiky, spiky], steal)).toMatchObject({
      pass: false,
      measured: "worst 80.0 ms; over the limit at minutes 31.0 (12.5 %) (in brackets, the machine's steal)",
    });
    expect(eventLoopCriterion([quiet], steal).measured).toBe('worst 5.0 ms');
  });
});
