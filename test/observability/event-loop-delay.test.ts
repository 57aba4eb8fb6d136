/**
 * The event-loop delay metrics: a probe that records how late it ran, every 100 ms while the loop
 * has work and every second while it is idle, read and reset by each scrape.
 */
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import {
  BUSY_PROBE_MS,
  EVENT_LOOP_METRICS,
  type EventLoopProbe,
  IDLE_PROBE_MS,
  registerEventLoopDelay,
} from '../../src/observability/event-loop-delay.ts';
import { waitFor } from '../support/wait-for.ts';

const PREFIX = 'test_';
let probe: EventLoopProbe | undefined;

afterEach(() => probe?.close());

async function scrape(registry: Registry): Promise<Map<string, number>> {
  const metrics = await registry.getMetricsAsJSON();
  return new Map(metrics.map((metric) => [metric.name, Number(metric.values[0]?.value)]));
}

/** Keeps the event loop busy for `ms`, as a long synchronous task does. */
function block(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // spinning
  }
}

describe('event-loop delay', () => {
  it('reports a stall as the time the probe ran late, and each scrape starts the figures again', async () => {
    const registry = new Registry();
    probe = registerEventLoopDelay(PREFIX, registry);
    const names = (await scrape(registry)).keys();
    expect([...names].sort()).toEqual(EVENT_LOOP_METRICS.map((name) => `${PREFIX}${name}`).sort());

    // A new probe runs every 100 ms: a 300 ms stall holds it past its time by 200 ms at least.
    block(300);
    const stalled = await waitFor('a sample after the stall', async () => {
      const figures = await scrape(registry);
      return (figures.get(`${PREFIX}nodejs_eventloop_lag_max_seconds`) ?? 0) > 0 && figures;
    });
    expect(stalled.get(`${PREFIX}nodejs_eventloop_lag_max_seconds`)).toBeGreaterThanOrEqual(0.19);
    expect(stalled.get(`${PREFIX}nodejs_eventloop_lag_max_seconds`)).toBeLessThan(0.5);
    expect(stalled.get(`${PREFIX}nodejs_eventloop_lag_p99_seconds`)).toBeGreaterThanOrEqual(0.19);

    // The next samples were on time: the stall is in no later scrape.
    const after = await waitFor(
      'a scrape with samples since the stall',
      async () => {
        const figures = await scrape(registry);
        return (figures.get(`${PREFIX}nodejs_eventloop_lag_max_seconds`) ?? 0) > 0 && figures;
      },
      { everyMs: 150 },
    );
    expect(after.get(`${PREFIX}nodejs_eventloop_lag_max_seconds`)).toBeLessThan(0.15);
  });

  it('shows a stall in the first scrape after the probe that it delayed ran', async () => {
    const registry = new Registry();
    probe = registerEventLoopDelay(PREFIX, registry);
    await scrape(registry); // starts the figures from here
    block(300);
    // The probe was due during the stall: it runs in the first timers phase after it, before a timer
    // set now for later. One scrape then, as Prometheus makes one every interval.
    await new Promise((resolve) => setTimeout(resolve, BUSY_PROBE_MS + 50));
    const figures = await scrape(registry);
    expect(figures.get(`${PREFIX}nodejs_eventloop_lag_max_seconds`)).toBeGreaterThanOrEqual(0.19);
    expect(figures.get(`${PREFIX}nodejs_eventloop_lag_p99_seconds`)).toBeGreaterThanOrEqual(0.19);
  });

  it('samples every second while the loop is idle, and every 100 ms again once it has work', async () => {
    const registry = new Registry();
    probe = registerEventLoopDelay(PREFIX, registry);
    const current = probe;
    expect(current.everyMs).toBe(BUSY_PROBE_MS);
    await waitFor('the idle interval', () => current.everyMs === IDLE_PROBE_MS, { everyMs: 100 });

    // Busy for a tenth of the next second: the probe after it goes back to 100 ms.
    block(100);
    await waitFor('the busy interval', () => current.everyMs === BUSY_PROBE_MS, {
      timeoutMs: 3_000,
      everyMs: 100,
    });
  });
});
