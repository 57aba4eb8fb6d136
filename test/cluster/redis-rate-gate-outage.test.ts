/**
 * The cluster-wide upstream budget through a Redis outage, against a private redis-server: with
 * Redis stopped each of three gates (three relays) keeps to its last share, so together they still
 * keep to the budget; with Redis back they share one bucket again. Counts are checked against
 * bounds with generous margins for the edges of the window.
 */
import { setMaxListeners } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { RedisRateGate } from '../../src/cluster/redis-rate-gate.ts';
import { redisAvailable, useRedis } from '../support/redis.ts';
import { waitFor } from '../support/wait-for.ts';

const RPS = 30;
/** Each count's window: its bound (the budget over it plus a burst) is still well below three budgets'. */
const WINDOW_MS = 1_500;

describe.skipIf(!redisAvailable())('RedisRateGate through a Redis outage', () => {
  const redis = useRedis();
  const gates: RedisRateGate[] = [];
  let stopping = new AbortController();
  afterEach(async () => {
    stopping.abort();
    stopping = new AbortController();
    await Promise.all(gates.splice(0).map((gate) => gate.close()));
  });

  function gate(failOpenFraction = 0.5): RedisRateGate {
    const created = new RedisRateGate({
      topology: { kind: 'single', url: redis.server.url },
      instanceId: `gate-${gates.length}`,
      rps: RPS,
      failOpenFraction,
    });
    gates.push(created);
    return created;
  }

  /** Four callers per gate taking tokens as fast as they are given; counts what each gate let through. */
  function hammer(of: RedisRateGate[]): number[] {
    const counts = of.map(() => 0);
    // Every caller waits on the one stop signal, as every upstream call does on the transport's.
    setMaxListeners(0, stopping.signal);
    of.forEach((one, index) => {
      for (let caller = 0; caller < 4; caller++) {
        void (async () => {
          while (!stopping.signal.aborted) {
            try {
              await one.acquire(stopping.signal);
              counts[index]! += 1;
            } catch {
              return;
            }
          }
        })();
      }
    });
    return counts;
  }

  /** Tokens let through over the next `ms`, and the seconds that really took. */
  async function countOver(counts: number[], ms: number): Promise<{ taken: number; seconds: number }> {
    const sum = () => counts.reduce((total, count) => total + count, 0);
    const [before, startedAt] = [sum(), performance.now()];
    const until = startedAt + ms;
    await waitFor(`${ms} ms to pass`, () => performance.now() >= until, {
      timeoutMs: ms + 5_000,
      everyMs: 50,
    });
    return { taken: sum() - before, seconds: (performance.now() - startedAt) / 1000 };
  }

  it('keeps the cluster within the budget while Redis is down, and shares one bucket again once it is back', async () => {
    const trio = [gate(), gate(), gate()];
    const counts = hammer(trio);
    // While the gates' spending ramps up, each computes its share from a different moment and the
    // shares may add up to more than the budget: wait until they reflect a steady demand.
    const shares = () => trio.map((one) => one.status().share ?? 0);
    await waitFor(
      'shares that reflect the demand',
      () => shares().every((share) => share > 0.2) && shares().reduce((sum, share) => sum + share) <= 1.1,
    );

    await redis.server.stop();
    await waitFor('every gate to fail open', () => trio.every((one) => one.status().failOpen));
    const bound = trio.reduce((sum, one) => sum + one.status().failOpenRps, 0);
    expect(bound).toBeLessThanOrEqual(RPS * 1.2); // the last shares, not 3 x RPS
    const down = await countOver(counts, WINDOW_MS);
    // Each fallback bucket starts full: one second's worth of its share as a burst.
    expect(down.taken).toBeLessThanOrEqual(bound * down.seconds * 1.25 + bound);
    expect(down.taken).toBeGreaterThan(0);

    await redis.start();
    await waitFor('every gate back on Redis', () => trio.every((one) => !one.status().failOpen), {
      timeoutMs: 15_000,
    });
    const up = await countOver(counts, WINDOW_MS);
    expect(up.taken).toBeLessThanOrEqual(RPS * up.seconds * 1.25 + RPS);
    expect(up.taken).toBeGreaterThan(RPS * up.seconds * 0.25); // taking from Redis again, not starved
  });
});
