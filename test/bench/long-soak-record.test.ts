/**
 * The long soak's record (bench/lib/long-soak/record.ts): the criteria judged on a run's
 * samples, Redis keys judged only in a cluster, and the Markdown saying pass or FAIL per criterion.
 */
import { describe, expect, it } from 'vitest';
import { criteria, markdownRecord, type SoakRun } from '../../bench/lib/long-soak/record.ts';
import type { RelaySample } from '../../bench/lib/long-soak/sampler.ts';

function samples(heapPerMinute: number, redisKeys: number, loopMs = 5): RelaySample[] {
  return Array.from({ length: 181 }, (_, index) => {
    const minute = index / 6;
    const connections = 900 + (index % 2) * 100;
    return {
      minute,
      rssMb: 150 + connections * 0.01,
      heapAfterGcMb: 40 + heapPerMinute * minute + connections * 0.01,
      externalMb: 5,
      resumeBufferMb: 2,
      fds: 60 + connections,
      handles: 40 + connections,
      timers: 30,
      eventLoopP99Ms: loopMs,
      cpuPercent: 40,
      cpuWaitPercent: 10,
      streams: 200,
      targets: 60,
      connections,
      redisKeys,
      redisMemoryMb: redisKeys > 0 ? 3 : 0,
    };
  });
}

function run(relaySamples: RelaySample[][], relays = relaySamples.map((_, i) => `relay ${i + 1}`)): SoakRun {
  return {
    title: 'Long soak',
    command: 'npm run soak -- --long',
    startedAt: new Date('2026-12-02T01:00:00Z'),
    minutes: 30,
    rate: 100,
    sampleSeconds: 10,
    warmupMinutes: 5,
    relays,
    samples: relaySamples,
    load: [{ minute: 1, value: 3 }],
    events: [{ minute: 2, untilMinute: 2.3, label: 'fault burst' }],
    crowd: {
      started: { websocket: 100 },
      opened: 90,
      refused: {},
      errors: {},
      closedByRelay: { 4008: 2 },
      socketErrors: 0,
      alive: 0,
      arrivalsPerSecond: 99,
    },
    turnover: { expired: 90, added: 90, deleted: 80, failures: 0 },
    observers: relays.map((relay) => ({
      relay,
      live: 10,
      streams: 10,
      largestGapMs: 1_500,
      closedWith: undefined,
    })),
    machine: '2 cores',
    crashes: [],
  };
}

describe('the long soak’s criteria', () => {
  it('passes a flat relay and leaves Redis keys out without Redis', () => {
    const judged = criteria(run([samples(0, 0)]));
    expect(judged.every((criterion) => criterion.pass)).toBe(true);
    expect(judged.map((criterion) => criterion.name).join('\n')).not.toContain('Redis');
  });

  it('fails a growing heap on one relay of three, a slow event loop, a stale observer and growing Redis keys', () => {
    const cluster = run([samples(0, 500), samples(0.5, 500), samples(0, 500, 60)]);
    cluster.observers[1]!.live = 9;
    cluster.samples[0] = cluster.samples[0]!.map((sample) => ({
      ...sample,
      redisKeys: 500 + sample.minute * 20,
    }));
    const failed = criteria(cluster)
      .filter((criterion) => !criterion.pass)
      .map((criterion) => criterion.name.split(':')[0]);
    expect(failed).toEqual([
      'heap used after GC',
      'Redis keys',
      'event-loop delay p99 < 50 ms in every sample',
      'every well-behaved observer stream `live` at the end',
    ]);
  });

  it('writes a record with a verdict per criterion, the plot and the figures per relay', () => {
    const record = markdownRecord(run([samples(0.5, 0)]), 'plot.svg');
    expect(record).toContain('![figures over time](plot.svg)');
    expect(record).toMatch(/\| heap used after GC: .* \| \*\*FAIL\*\* \|/);
    expect(record).toMatch(/\| open file descriptors: .* \| pass \|/);
    expect(record).toContain('| heap used after GC (MB) | relay 1 |');
    expect(record).toContain('fault burst at 2.0 min');
  });
});
