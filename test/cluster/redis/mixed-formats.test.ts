/**
 * A rolling upgrade (docs/cluster.md "Upgrades"): relays of this release and of the next share one
 * Redis (and a Redis Cluster where redis-cli is). The next release is played by a relay given a
 * test-only format 3 that lays out every kind anew (its values base64, so this release cannot read
 * them; never shipped): it reads this release's format and writes its own. Through a lease hand-over
 * each way (the holder shuts down, as in a deploy) nothing crashes, the relay of this release counts
 * what it cannot read, and the clients of both relays keep books equal to upstream's.
 */
import { describe, expect, it } from 'vitest';
import { epochs, nextRelease, useMixedFormatRelays } from '../../support/cluster/mixed-formats.ts';
import { redisDeployments } from '../../support/cluster/redis.ts';
import { waitFor } from '../../support/wait-for.ts';

const NEXT_RELEASE = nextRelease(['message', 'state', 'history', 'budget']);

describe.each(redisDeployments())('relays of adjacent formats on %s redis', (kind) => {
  const cluster = useMixedFormatRelays(kind);
  const { relay, stop, viewer, expectServed, skipped } = cluster;

  it("hands this release's leases to the next: it continues their streams; this release polls for itself", async () => {
    const markets = cluster.sim.market.marketIds().slice(0, 2);
    const current = await relay();
    const onCurrent = await viewer(current, markets);
    await waitFor('the relay of this release holding every book', () => current.broker.status().owned === 2);
    const next = await relay(NEXT_RELEASE);
    const onNext = await viewer(next, markets);
    await expectServed([onCurrent, onNext], markets, 1);
    // The next release reads this one's messages: its client is in the cluster's epochs.
    expect(epochs(onNext, markets)).toEqual(epochs(onCurrent, markets));

    await stop(current);
    await waitFor('the next release holding every book', () => next.broker.status().owned === 2);
    // What the stopped relay's client saw has reached the next release's streams too.
    await waitFor('the next release at the positions the moved client saw', () =>
      markets.every((market) => onNext.view('book', market)!.seq >= onCurrent.view('book', market)!.seq),
    );
    const moved = await viewer(next, markets, onCurrent);
    // It continued from the state this release left (no new epoch), and resumed its client.
    await expectServed([onNext, moved], markets);
    expect(epochs(onNext, markets)).toEqual(epochs(onCurrent, markets));
    expect(moved.of('snapshot')).toEqual([]);

    // A relay of this release joining now reads neither the stored state nor the holder's messages:
    // it polls for itself, while the leases stay with the holder (spread within a release only).
    const joining = await relay();
    const onJoining = await viewer(joining, markets);
    await expectServed([onNext, moved, onJoining], markets);
    const counts = await skipped(joining);
    expect(counts.state).toBeGreaterThan(0);
    expect(counts.message).toBeGreaterThan(0);
    expect(next.broker.status()).toMatchObject({ owned: 2, relays: 1 });
    expect(await skipped(next)).toEqual({ message: 0, state: 0, history: 0, roster: 0, budget: 0 });
  }, 20_000);

  it("hands the next release's leases to this one: a new epoch, and clients of both served", async () => {
    const markets = cluster.sim.market.marketIds().slice(2, 4);
    const next = await relay(NEXT_RELEASE);
    const onNext = await viewer(next, markets);
    await waitFor('the relay of the next release holding every book', () => next.broker.status().owned === 2);
    const current = await relay();
    const onCurrent = await viewer(current, markets);
    // This release reads none of the holder's messages: it polls for itself, in epochs of its own.
    await expectServed([onNext, onCurrent], markets, 1);
    const before = epochs(onCurrent, markets);
    expect(before).not.toEqual(epochs(onNext, markets));

    await stop(next);
    // Its streams leave their own epochs for new ones of the cluster's (the stored state unreadable).
    await waitFor('this release holding every book', () =>
      epochs(onCurrent, markets).every((epoch, m) => epoch !== before[m]),
    );
    // Its client resumes here: the history is of a format not read, so a snapshot, not a guess.
    const moved = await viewer(current, markets, onNext);
    await expectServed([onCurrent, moved], markets);
    expect(moved.of('snapshot')).toHaveLength(markets.length);
    expect(epochs(moved, markets)).toEqual(epochs(onCurrent, markets));
    const counts = await skipped(current);
    expect(counts.message).toBeGreaterThan(0);
    expect(counts.state).toBeGreaterThan(0);
    expect(counts.roster).toBeGreaterThan(0);
    // The budget's bucket in the next format: this release kept to its share by itself meanwhile.
    expect(counts.budget).toBeGreaterThan(0);

    // The next release, back, reads this release's writes and follows them.
    const back = await relay(NEXT_RELEASE);
    const onBack = await viewer(back, markets);
    await expectServed([onCurrent, moved, onBack], markets);
    expect(epochs(onBack, markets)).toEqual(epochs(onCurrent, markets));
  }, 20_000);
});
