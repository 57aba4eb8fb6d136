/**
 * The cluster-wide upstream budget through a Redis outage, against a private redis-server: with
 * Redis stopped each of three gates (three relays) keeps to its last share, so together they still
 * keep to the budget; with Redis back they share one bucket again. Counts are checked against
 * bounds with generous margins for the edges of the window.
 */
import { describe, expect, it } from 'vitest';
import { RPS, useRateGates, WINDOW_MS } from '../../support/cluster/rate-gates.ts';
import { redisAvailable } from '../../support/cluster/redis.ts';
import { waitFor } from '../../support/wait-for.ts';

describe.skipIf(!redisAvailable())('RedisRateGate through a Redis outage', () => {
  const { redis, gate, hammer, countOver } = useRateGates();

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
