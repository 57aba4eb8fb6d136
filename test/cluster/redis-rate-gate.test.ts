/**
 * The cluster-wide upstream budget against a private redis-server: three gates (three relays) that
 * all want more than the budget get no more than the budget together; a gate that never reached
 * Redis keeps to its configured fraction. (With Redis stopped and restarted:
 * redis-rate-gate-outage.test.ts.) Counts are checked against bounds with generous margins for the
 * edges of the window.
 */
import { setMaxListeners } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { RedisRateGate } from '../../src/cluster/redis-rate-gate.ts';
import { redisAvailable, useRedis } from '../support/redis.ts';
import { waitFor } from '../support/wait-for.ts';

const RPS = 30;
/** Each count's window: its bound (the budget over it plus a burst) is still well below three budgets'. */
const WINDOW_MS = 1_500;

describe.skipIf(!redisAvailable())('RedisRateGate', () => {
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

  it('holds three relays that all want more together to one budget, and reports their shares', async () => {
    const trio = [gate(), gate(), gate()];
    const counts = hammer(trio);
    await waitFor('every gate to learn its share', () =>
      trio.every((one) => one.status().share !== undefined),
    );
    const { taken, seconds } = await countOver(counts, WINDOW_MS);
    // Three local buckets would let 3 x RPS through; the shared one lets RPS (plus its burst).
    expect(taken).toBeLessThanOrEqual(RPS * seconds * 1.25 + RPS);
    expect(taken).toBeGreaterThan(0);
    await waitFor('shares from a full report period', () =>
      trio.every((one) => (one.status().share ?? 0) > 0.1),
    );
    const shares = trio.map((one) => one.status().share!);
    // Each relay computes its share from its own report, a moment apart: about the whole budget.
    const total = shares.reduce((sum, share) => sum + share, 0);
    expect(total).toBeGreaterThan(0.6);
    expect(total).toBeLessThanOrEqual(1.1);
    expect(trio.map((one) => one.status().failOpen)).toEqual([false, false, false]);
  });

  it('keeps to the configured fraction when Redis was never reached', async () => {
    const lonely = new RedisRateGate({
      topology: { kind: 'single', url: 'redis://127.0.0.1:1' },
      instanceId: 'lonely',
      rps: RPS,
      failOpenFraction: 0.2,
    });
    gates.push(lonely);
    const counts = hammer([lonely]);
    const { taken, seconds } = await countOver(counts, 1_000);
    expect(lonely.status()).toMatchObject({ failOpen: true, share: undefined, failOpenRps: RPS * 0.2 });
    expect(taken).toBeLessThanOrEqual(RPS * 0.2 * (seconds * 1.25 + 1));
  });
});
