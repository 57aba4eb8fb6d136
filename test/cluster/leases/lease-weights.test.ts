/**
 * Leases weighted by cost (docs/cluster.md "How leases move"), on one Redis: of three relays with 18
 * books subscribed on each, the one whose polls cost 20 times the others' (its cost meter scaled, as a
 * relay holding the busy books or on a slower machine measures) announces a lower weight than the others,
 * and ends holding fewer leases than before, exactly those its weight gives it, handed over with no
 * gap or snapshot for any client. Every relay meters
 * each poll at a fixed cost (test/support/cluster/balanced-relays.ts), so a loaded machine's pauses
 * never weigh a cheap relay down.
 */

import { describe, expect, it } from 'vitest';
import type { ProtocolClient } from '../../support/clients/protocol-client.ts';
import { MARKETS, useBalancedRelays } from '../../support/cluster/balanced-relays.ts';
import { redisAvailable } from '../../support/cluster/redis.ts';
import { waitFor } from '../../support/wait-for.ts';

describe.skipIf(!redisAvailable())('leases weighted by cost', () => {
  const cluster = useBalancedRelays({ redis: 'single', measureCosts: true });
  const snapshots = (client: ProtocolClient) =>
    client.messages.filter((message) => message.type === 'snapshot').length;

  it('leaves the relay whose polls cost more with fewer leases, no client seeing a gap or snapshot', {
    timeout: 75_000,
  }, async () => {
    for (let i = 0; i < 3; i += 1) await cluster.relayWithClient();
    const total = (counts: number[]) => counts.reduce((a, b) => a + b);
    await waitFor('every book held', () => total(cluster.owned()) === MARKETS, {
      timeoutMs: 15_000,
      everyMs: 50,
    });
    // Settled first: from a split still moving (the first relay holding nearly every book), the costly
    // relay's cost per lease starts as the cluster's own, and its weight has further to go.
    await cluster.evenSplit('the even split', 20_000);
    await waitFor('every book on every client', () =>
      cluster.clients.every((client) => cluster.markets.every((market) => client.view('book', market))),
    );
    const before = cluster.clients.map(snapshots);

    // The relay holding the most (at least a third) is made costly: it has leases to give away.
    const owned = cluster.owned();
    const costlyIndex = owned.indexOf(Math.max(...owned));
    const heldBefore = owned[costlyIndex]!;
    cluster.scaleCost(costlyIndex, 20);
    // Weighted rendezvous hashing is a pure function of the announced weights: wait for the costly
    // relay to announce less than an even weight and the others more (each change past a dead band,
    // so they settle), and for the leases to be exactly where those weights put them. Lowering one
    // relay's weight and raising the others' can only take targets from it.
    let weights: number[] = [];
    await waitFor(
      'the costly relay to weigh less than the others and to hold the fewer leases the weights give it',
      async () => {
        weights = await cluster.announcedWeights();
        const now = cluster.owned();
        // A weight just under the others' may still give the costly relay every lease it had: the
        // weights go on moving until it holds fewer.
        return (
          weights.every((weight, i) => (i === costlyIndex ? weight < 1 : weight > 1)) &&
          JSON.stringify(now) === JSON.stringify(cluster.expectedOwned(weights)) &&
          total(now) === MARKETS &&
          now[costlyIndex]! < heldBefore
        );
      },
      // The weights move a fifth of the way per announcement: a loaded machine needs several.
      { timeoutMs: 30_000, everyMs: 100 },
    ).catch((error: Error) => {
      const leases = `relay ${costlyIndex} made costly with ${heldBefore}; now ${cluster.owned().join(', ')}`;
      const expected = cluster.expectedOwned(weights).join(', ');
      throw new Error(`${error.message} (leases: ${leases}; weights ${weights.join(', ')} give ${expected})`);
    });
    expect(cluster.owned()[costlyIndex]).toBeLessThan(heldBefore);

    // Every book, moved or not, reaches every client as upstream has it now.
    const upstreamNow = await cluster.upstreamNow();
    await waitFor('every book as upstream has it now on every client', () =>
      cluster.clients.every((client) =>
        cluster.markets.every((market, m) => client.view('book', market)!.ts >= upstreamNow[m]!),
      ),
    );
    expect(cluster.clients.map(snapshots)).toEqual(before);
    for (const client of cluster.clients) expect(client.violations).toEqual([]);
  });
});
