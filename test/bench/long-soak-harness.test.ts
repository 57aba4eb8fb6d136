/**
 * The long soak's machinery, briefly (bench/long-soak.ts runs it for half an hour): a relay process
 * sampled from outside (a GC forced through its inspector, its `/metrics`), the passing crowd
 * against it, and the market turnover through the simulator's admin API.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Crowd } from '../../bench/lib/long-soak/clients.ts';
import { InspectorSession } from '../../bench/lib/long-soak/inspector.ts';
import { type SoakProcess, startRelayProcess } from '../../bench/lib/long-soak/processes.ts';
import {
  type SampledRelay,
  sampleRedis,
  sampleRelay,
  stealMeter,
} from '../../bench/lib/long-soak/sampler.ts';
import { longestLivedMarkets, MarketTurnover } from '../../bench/lib/long-soak/upstream-driver.ts';
import { type SimulatorHandle, startSimulator } from '../../src/sim/server.ts';
import { waitFor } from '../support/wait-for.ts';

describe('the long soak’s machinery', () => {
  let sim: SimulatorHandle;
  let relay: SoakProcess;
  let inspector: InspectorSession;
  beforeAll(async () => {
    sim = await startSimulator({ markets: 12, seed: 1, tickMs: 100 });
    relay = await startRelayProcess('relay', [`--upstream=${sim.url}`]);
    inspector = await InspectorSession.connect(relay.inspectorUrl!);
  });
  afterAll(async () => {
    inspector?.close();
    await relay?.stop();
    await sim?.close();
  });

  it('samples a relay process from outside: memory after a forced GC, fds, handles, timers, loop delay, CPU', async () => {
    const sampled: SampledRelay = { url: relay.url, pid: relay.pid, inspector };
    const noRedis = await sampleRedis(undefined);
    const first = await sampleRelay(sampled, 0, noRedis);
    const second = await sampleRelay(sampled, 0.1, noRedis);
    for (const sample of [first, second]) {
      expect(sample.heapAfterGcMb).toBeGreaterThan(1);
      expect(sample.rssMb).toBeGreaterThan(sample.heapAfterGcMb);
      expect(sample.externalMb).toBeGreaterThan(0);
      expect(sample.fds).toBeGreaterThan(5);
      expect(sample.handles).toBeGreaterThan(1);
      expect(Number.isInteger(sample.timers) && sample.timers >= 0).toBe(true);
      expect(sample.eventLoopP99Ms).toBeGreaterThanOrEqual(0);
      expect(sample.streams).toBe(0);
      expect(sample.redisKeys).toBe(0);
    }
    expect(first.cpuPercent).toBeNaN();
    expect(second.cpuPercent).toBeGreaterThanOrEqual(0);
    // Linux tells how long the relay waited for a core; elsewhere the figure is left out (NaN).
    if (process.platform === 'linux') expect(second.cpuWaitPercent).toBeGreaterThanOrEqual(0);
    expect(relay.crashed()).toBeUndefined();
  });

  it('sends a passing crowd that opens connections, subscribes and leaves entirely on stop', async () => {
    const crowd = new Crowd({
      relays: [relay.url],
      simUrl: sim.url,
      rate: 40,
      addressBlock: 91,
      addresses: 50,
    });
    await crowd.start();
    try {
      // The first lanes are slow readers and SSE clients; WebSocket lanes follow.
      await waitFor(
        'clients of every kind to connect',
        () => crowd.report().opened >= 20 && (crowd.report().started.websocket ?? 0) >= 5,
        { timeoutMs: 8_000 },
      );
    } finally {
      const report = crowd.stop();
      expect(report.alive).toBe(0);
      expect(report.started.websocket).toBeGreaterThan(0);
      expect(report.refused).toEqual({});
    }
    const metrics = async () => (await fetch(`${relay.url}/metrics`)).text();
    await waitFor('the relay to see them go', async () =>
      /^market_relay_connections 0$/m.test(await metrics()),
    );
  });

  it('expires markets, adds as many, deletes ended ones, never touching the kept ones', async () => {
    const activeBefore = sim.market.activeMarketIds().length;
    const kept = new Set(await longestLivedMarkets(sim.url, 2));
    expect(kept.size).toBe(2);
    const turnover = new MarketTurnover({ simUrl: sim.url, kept, turnoverMs: 150, deleteAfterMs: 150 });
    await turnover.start();
    try {
      await waitFor(
        'two expiries and a deletion',
        () => turnover.counts.expired >= 2 && turnover.counts.deleted >= 1,
        {
          timeoutMs: 8_000,
        },
      );
    } finally {
      await turnover.stop();
    }
    expect(turnover.counts.added).toBe(turnover.counts.expired);
    expect(turnover.counts.failures).toBe(0);
    expect(sim.market.activeMarketIds()).toHaveLength(activeBefore);
    for (const market of kept) expect(sim.market.activeMarketIds()).toContain(market);
  });

  it.runIf(process.platform === 'linux')(
    "reads the machine's steal since the previous reading as a share of its CPU time",
    async () => {
      const stealSince = stealMeter();
      // NaN until the machine's CPU time has moved by a tick (10 ms of /proc/stat) since the last reading.
      const steal = await waitFor('a tick of CPU time', () => {
        const share = stealSince();
        return Number.isFinite(share) ? share : undefined;
      });
      expect(steal).toBeGreaterThanOrEqual(0);
      expect(steal).toBeLessThanOrEqual(100);
    },
  );
});
