/**
 * End to end, `trades`, against every simulator profile: a burst beyond what one poll reads (500
 * entries, whatever upstream's page size) is reported and loses only the oldest beyond 500 of a
 * newest-first listing; a client deduping by `activity_id` as the SDK does gets every entry once
 * across a relay restart (docs/protocol.md "`trades` data").
 */
import { describe, expect, it } from 'vitest';
import { RecentIds } from '../../../packages/protocol/src/channels/trades/recent-ids.ts';
import {
  TRADES_SEEN_IDS,
  TRADES_SNAPSHOT_SIZE,
} from '../../../packages/protocol/src/channels/trades/trades.ts';
import { MAX_ACTIVITY_ENTRIES } from '../../../src/relay/channels/trades/relay-activity.ts';
import { simulatorProfileNames, simulatorProfiles } from '../../../src/sim/profile.ts';
import {
  caughtUp,
  entriesOf,
  setup,
  subscribeTrades,
  tradeMessages,
  truncatedPolls,
  upstreamIds,
} from '../../support/channels/trades.ts';
import { ids } from '../../support/channels/trades-listing.ts';
import { startHarnessRelay, useHarness } from '../../support/harness.ts';

describe.each(simulatorProfileNames)('trades bounds end to end (%s profile)', (profile) => {
  const { opened, start } = useHarness(profile);

  it('a burst beyond what one poll reads is reported, and loses only what a newest-first listing pushed past', async () => {
    const harness = await start(setup);
    const market = harness.sim.market.activeMarketIds()[0]!;
    const client = await subscribeTrades(opened, harness.relay, market);
    harness.sim.market.printTrades(market, 120);
    await caughtUp(harness, client, market);
    expect(await truncatedPolls(harness.relay)).toBe(0);

    const bound = MAX_ACTIVITY_ENTRIES;
    harness.sim.market.printTrades(market, bound + 150);
    await caughtUp(harness, client, market);
    const log = upstreamIds(harness.sim, market);
    const delivered = ids(entriesOf(tradeMessages(client, market)));
    if (simulatorProfiles[profile].activityOrder === 'newest-first') {
      // Everything up to the burst, then the burst's newest `bound` trades, in order, each once.
      const beforeBurst = log.slice(0, -(bound + 150));
      expect(delivered).toEqual([
        ...beforeBurst.slice(beforeBurst.indexOf(delivered[0]!)),
        ...log.slice(-bound),
      ]);
      expect(await truncatedPolls(harness.relay)).toBe(1);
    } else {
      // Oldest first, the next poll reads on from where the bounded one stopped: nothing is lost.
      expect(delivered).toEqual(log.slice(log.indexOf(delivered[0]!)));
      expect(await truncatedPolls(harness.relay)).toBeGreaterThanOrEqual(1);
    }
  });

  it('a client deduping by activity_id gets every entry once across a relay restart', async () => {
    const harness = await start(setup);
    const market = harness.sim.market.activeMarketIds()[0]!;
    const first = await subscribeTrades(opened, harness.relay, market);
    harness.sim.market.printTrades(market, 120);
    await caughtUp(harness, first, market);
    await first.close();
    await harness.relay.close();

    // Fewer trades than a snapshot holds while no relay runs: the next snapshot still reaches back.
    harness.sim.market.printTrades(market, 30);
    const restarted = await startHarnessRelay(harness.sim, setup.relay);
    opened.push(restarted);
    const second = await subscribeTrades(opened, restarted, market);
    harness.sim.market.printTrades(market, 170);
    await caughtUp(harness, second, market);

    // The dedupe contract of the SDK: remember delivered ids across connections and epochs.
    const seen = new RecentIds(TRADES_SEEN_IDS);
    const consumed: string[] = [];
    for (const messages of [tradeMessages(first, market), tradeMessages(second, market)])
      for (const id of ids(entriesOf(messages))) if (seen.add(id)) consumed.push(id);

    const log = upstreamIds(harness.sim, market);
    const firstSnapshot = ids(entriesOf(tradeMessages(first, market).slice(0, 1)));
    expect(consumed).toEqual(log.slice(log.indexOf(firstSnapshot[0]!)));
    // The new epoch's snapshot repeated entries the first relay had delivered: deduping was needed.
    const secondMessages = tradeMessages(second, market);
    expect(secondMessages[0]!.epoch).not.toBe(tradeMessages(first, market)[0]!.epoch);
    const repeated = ids(entriesOf(secondMessages.slice(0, 1))).filter((id) =>
      ids(entriesOf(tradeMessages(first, market))).includes(id),
    );
    expect(repeated.length).toBe(TRADES_SNAPSHOT_SIZE - 30);
  });
});
