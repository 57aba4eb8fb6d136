/**
 * A next release that lays out only its messages anew (docs/cluster.md "Upgrades"): it keeps writing
 * the state, the histories and the budget as this release does, so when its leases pass to this
 * release the streams continue in their epochs and a client moving from it resumes with no snapshot;
 * only while it holds a lease does this release, unable to read its messages, poll for itself.
 */
import { describe, expect, it } from 'vitest';
import { epochs, nextRelease, useMixedFormatRelays } from '../../support/cluster/mixed-formats.ts';
import { redisAvailable } from '../../support/cluster/redis.ts';
import { waitFor } from '../../support/wait-for.ts';

describe.skipIf(!redisAvailable())('a next release of new messages only', () => {
  const cluster = useMixedFormatRelays('single');
  const { relay, stop, viewer, expectServed, skipped } = cluster;

  it('hands its leases to this release, which continues their streams from the state it reads', async () => {
    const markets = cluster.sim.market.marketIds().slice(0, 2);
    const next = await relay(nextRelease(['message']));
    const onNext = await viewer(next, markets);
    await waitFor('the next release holding every book', () => next.broker.status().owned === 2);
    const current = await relay();
    const onCurrent = await viewer(current, markets);
    await expectServed([onNext, onCurrent], markets, 1);
    // Its messages unread here, this release polls for itself meanwhile, in epochs of its own.
    expect(epochs(onCurrent, markets)).not.toEqual(epochs(onNext, markets));

    await stop(next);
    // This release takes the leases and continues the next release's epochs from the stored state.
    const numbered = epochs(onNext, markets);
    await waitFor('this release in the epochs the next release numbered', () =>
      epochs(onCurrent, markets).every((epoch, m) => epoch === numbered[m]),
    );
    await waitFor('this release at the positions the moved client saw', () =>
      markets.every((market) => onCurrent.view('book', market)!.seq >= onNext.view('book', market)!.seq),
    );
    const moved = await viewer(current, markets, onNext);
    await expectServed([onCurrent, moved], markets);
    expect(moved.of('snapshot')).toEqual([]);
    const counts = await skipped(current);
    expect(counts.message).toBeGreaterThan(0);
    expect(counts).toMatchObject({ state: 0, history: 0, budget: 0 });
  }, 20_000);
});
