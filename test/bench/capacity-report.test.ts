/**
 * bench/scenarios/capacity-report.ts: `--workers 2` by its cost, as issue 50 asks the capacity ramp
 * to report it: the server CPU per delivery of the workers over one process's, at each client count
 * both ramps reached.
 */
import { describe, expect, it } from 'vitest';
import type { RampResult, RampStep } from '../../bench/scenarios/capacity.ts';
import { capacityReport, workersCost } from '../../bench/scenarios/capacity-report.ts';

function step(clients: number, deliveriesPerSec: number, cpuShare: number): RampStep {
  return {
    clients,
    deliveriesPerSec,
    latency: { count: 100, p50Ms: 5, p99Ms: 20, maxMs: 30 },
    cpuShare,
    generatorCpuShare: 0.2,
    meanFrameBytes: 300,
    sampleFailures: 0,
  };
}

function ramp(server: string, steps: RampStep[]): RampResult {
  return { server, steps, sustainedPerSec: 0, keptPacePerSec: 0 };
}

describe('the capacity report, --workers 2 by its cost', () => {
  // One process: 10 µs a delivery at both steps; the workers: 25 µs, then 11 µs; a third count only
  // the workers reached.
  const single = ramp('one process', [step(2_000, 20_000, 0.2), step(4_000, 40_000, 0.4)]);
  const workers = ramp('workers', [
    step(2_000, 20_000, 0.5),
    step(4_000, 40_000, 0.44),
    step(6_000, 60_000, 1),
  ]);

  it('divides the CPU per delivery at each client count both ramps reached', () => {
    const costs = workersCost(single, workers);
    expect(costs.map(({ clients }) => clients)).toEqual([2_000, 4_000]);
    expect(costs[0]!.ratio).toBeCloseTo(2.5, 6);
    expect(costs[1]!.ratio).toBeCloseTo(1.1, 6);
  });

  it('holds the worst step from 2,000 clients against 1.15 x', () => {
    const idle = {
      connections: 10,
      connected: 10,
      withSnapshot: 10,
      generators: 1,
      baseRssMb: 100,
      rssMb: 110,
      rssPerConnectionKb: 10,
      cpuShare: 0.01,
      deliveriesPerSec: 1,
      updatesPerClient: 1,
      sampledFrames: 1,
      sampleFailures: 0,
    };
    const report = capacityReport({ idle, ramps: [single, workers] }, '20000');
    const cost = report.targets.find(({ name }) => name.includes('CPU per delivery, worst step'));
    expect(cost?.value).toBeCloseTo(2.5, 6);
    expect(cost?.met).toBe(false);
  });
});
