/**
 * End to end, `trades`, against every simulator profile (some serve 20 or 25 entries a page): the
 * snapshot holds the 50 most recent entries, and every activity entry of a burst of several pages
 * between two polls reaches a client exactly once, oldest first (docs/protocol.md "`trades` data").
 * Bursts beyond one poll's bound, and relay restarts: trades-bounds.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { TRADES_SNAPSHOT_SIZE } from '../../../packages/protocol/src/channels/trades/trades.ts';
import type { TradeEntry } from '../../../packages/protocol/src/protocol/messages.ts';
import { simulatorProfileNames } from '../../../src/sim/profile.ts';
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
import { useHarness } from '../../support/harness.ts';

describe.each(simulatorProfileNames)('trades end to end (%s profile)', (profile) => {
  const { opened, start } = useHarness(profile);

  it('snapshots the 50 most recent trades, then delivers bursts of several pages between polls, each entry once, oldest first', async () => {
    const harness = await start(setup);
    const market = harness.sim.market.activeMarketIds()[0]!;
    // More than a snapshot holds, over several of upstream's pages under a small page cap.
    harness.sim.market.printTrades(market, 120);
    const client = await subscribeTrades(opened, harness.relay, market);
    const [snapshot] = tradeMessages(client, market);
    const snapshotIds = ids(entriesOf([snapshot!]));
    expect(snapshotIds).toHaveLength(TRADES_SNAPSHOT_SIZE);
    expect(snapshotIds).toEqual(upstreamIds(harness.sim, market).slice(-TRADES_SNAPSHOT_SIZE));

    // 185: the burst that lost 81-90 trades when a poll read 5 pages of 20 (the profile's cap).
    for (const burst of [185, 250, 40, 101]) {
      expect(harness.sim.market.printTrades(market, burst)).toBe(burst);
      harness.sim.tick(); // the book's own fills add a few more
      await caughtUp(harness, client, market);
    }

    const messages = tradeMessages(client, market);
    const delivered = ids(entriesOf(messages));
    const log = upstreamIds(harness.sim, market);
    expect(delivered).toEqual(log.slice(log.indexOf(snapshotIds[0]!)));
    expect(new Set(delivered).size).toBe(delivered.length);
    for (const update of messages.slice(1)) {
      expect(update.type).toBe('update');
      expect((update.data as { trades: TradeEntry[] }).trades.length).toBeGreaterThan(0);
      expect((update.data as { trades: TradeEntry[] }).trades.length).toBeLessThanOrEqual(
        TRADES_SNAPSHOT_SIZE,
      );
    }
    expect(messages.map((message) => message.seq)).toEqual(messages.map((_, i) => i + 1));
    expect(client.of('error')).toEqual([]);
    // No burst reached one poll's bound (500 entries), whatever the page size.
    expect(await truncatedPolls(harness.relay)).toBe(0);
    // The bursts were paged: the relay asked past the first page.
    const pagedPast = harness.sim.requests.filter(
      (request) => request.path.endsWith('/activity') && Number(request.query.offset ?? 0) >= 100,
    );
    expect(pagedPast.length).toBeGreaterThan(0);
  });
});
