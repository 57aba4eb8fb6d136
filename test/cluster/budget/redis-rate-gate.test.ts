/**
 * The cluster-wide upstream budget against a private redis-server: three gates (three relays) that
 * all want more than the budget get no more than the budget together; a gate that never reached
 * Redis keeps to its configured fraction. (With Redis stopped and restarted:
 * redis-rate-gate-outage.test.ts.) Counts are checked against bounds with generous margins for the
 * edges of the window.
 */
import { describe, expect, it } from 'vitest';
import { RedisRateGate } from '../../../src/relay/coordination/redis/rate-gate.ts';
import { RPS, useRateGates, WINDOW_MS } from '../../support/cluster/rate-gates.ts';
import { redisAvailable } from '../../support/cluster/redis.ts';
import { waitFor } from '../../support/wait-for.ts';

describe.skipIf(!redisAvailable())('RedisRateGate', () => {
  const { gates, gate, hammer, countOver } = useRateGates();

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
