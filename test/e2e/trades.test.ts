/**
 * End to end, `trades`: every activity entry reaches a client exactly once, oldest first, when
 * more than a page of trades (100) happens between two polls, and across a relay restart for a
 * client that dedupes by `activity_id` as the SDK does (docs/protocol.md "`trades` data").
 */
import { describe, expect, it } from 'vitest';
import { TRADES_SNAPSHOT_SIZE } from '../../src/protocol/channels.ts';
import { TRADES_SEEN_IDS } from '../../src/protocol/limits.ts';
import type { TradeEntry } from '../../src/protocol/messages.ts';
import { RecentIds } from '../../src/protocol/recent-ids.ts';
import { ACTIVITY_PAGE_SIZE, MAX_ACTIVITY_ENTRIES } from '../../src/relay/channels/trades.ts';
import type { Relay } from '../../src/relay-server.ts';
import { simulatorProfileNames, simulatorProfiles } from '../../src/sim/profile.ts';
import type { SimulatorHandle } from '../../src/sim/server.ts';
import { type Harness, startHarnessRelay, useHarness } from '../support/harness.ts';
import { type Message, ProtocolClient } from '../support/protocol-client.ts';
import { waitFor } from '../support/wait-for.ts';

/** The trades messages of one market a client received, in order. */
function tradeMessages(client: ProtocolClient, market: string): Message[] {
  return client.messages.filter(
    (message) =>
      (message.type === 'snapshot' || message.type === 'update') &&
      message.channel === 'trades' &&
      message.market === market,
  );
}

const entriesOf = (messages: Message[]): TradeEntry[] =>
  messages.flatMap((message) => (message.data as { trades: TradeEntry[] }).trades);
const idsOf = (entries: readonly TradeEntry[]): string[] => entries.map((entry) => entry.activity_id);

/** The simulator's activity log, oldest first: what upstream's activity pages list, newest first. */
const upstreamIds = (sim: SimulatorHandle, market: string): string[] =>
  sim.market.market(market)!.trades.map((trade) => trade.id);

/**
 * No printed trades but the test's own; trades streams are polled at the price interval, which a
 * busy test machine could miss three times over at the harness's 20 ms (a false `stale`).
 */
const setup = { sim: { markets: 3, tradeFlow: () => undefined }, relay: { pricePollMs: 100 } };

describe.each(simulatorProfileNames)('trades end to end (%s profile)', (profile) => {
  let harness: Harness;
  const { opened, start } = useHarness(profile);

  async function subscribe(relay: Relay, market: string): Promise<ProtocolClient> {
    const client = await ProtocolClient.connect(relay.url);
    opened.push(client);
    expect(await client.request({ op: 'subscribe', channel: 'trades', markets: [market] })).toMatchObject({
      type: 'subscribed',
      channel: 'trades',
      markets: [market],
    });
    await waitFor('the trades snapshot', () => tradeMessages(client, market).length > 0);
    return client;
  }

  /** Waits until the client has received the newest upstream entry. */
  async function caughtUp(client: ProtocolClient, market: string): Promise<void> {
    const newest = upstreamIds(harness.sim, market).at(-1);
    await waitFor(`the client to receive ${newest}`, () =>
      idsOf(entriesOf(tradeMessages(client, market))).includes(newest!),
    );
  }

  it('delivers bursts of more than one activity page between polls, each entry once, oldest first', async () => {
    harness = await start(setup);
    const market = harness.sim.market.activeMarketIds()[0]!;
    const client = await subscribe(harness.relay, market);
    const [snapshot] = tradeMessages(client, market);
    const snapshotIds = idsOf(entriesOf([snapshot!]));
    expect(snapshotIds).toEqual(upstreamIds(harness.sim, market).slice(-TRADES_SNAPSHOT_SIZE));

    for (const burst of [250, 40, 130, 101]) {
      expect(harness.sim.market.printTrades(market, burst)).toBe(burst);
      harness.sim.tick(); // the book's own fills add a few more
      await caughtUp(client, market);
    }

    const messages = tradeMessages(client, market);
    const delivered = idsOf(entriesOf(messages));
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
    // The bursts were paged: the relay asked past the first page.
    const pagedPast = harness.sim.requests.filter(
      (request) =>
        request.path.endsWith('/activity') && Number(request.query.offset ?? 0) >= ACTIVITY_PAGE_SIZE,
    );
    expect(pagedPast.length).toBeGreaterThan(0);
  });

  it('a burst beyond the pages one poll reads is reported, and loses only what a newest-first listing pushed past', async () => {
    harness = await start(setup);
    const market = harness.sim.market.activeMarketIds()[0]!;
    const client = await subscribe(harness.relay, market);
    const truncatedPolls = async () => {
      const text = await (await fetch(`${harness.relay.url}/metrics`)).text();
      return Number(/^market_relay_trades_truncated_polls_total (\S+)$/m.exec(text)?.[1]);
    };
    harness.sim.market.printTrades(market, 120);
    await caughtUp(client, market);
    expect(await truncatedPolls()).toBe(0);

    const bound = MAX_ACTIVITY_ENTRIES;
    harness.sim.market.printTrades(market, bound + 150);
    await caughtUp(client, market);
    const log = upstreamIds(harness.sim, market);
    const delivered = idsOf(entriesOf(tradeMessages(client, market)));
    if (simulatorProfiles[profile].activityOrder === 'newest-first') {
      // Everything up to the burst, then the burst's newest `bound` trades, in order, each once.
      const beforeBurst = log.slice(0, -(bound + 150));
      expect(delivered).toEqual([
        ...beforeBurst.slice(beforeBurst.indexOf(delivered[0]!)),
        ...log.slice(-bound),
      ]);
      expect(await truncatedPolls()).toBe(1);
    } else {
      // Oldest first, the next poll reads on from where the bounded one stopped: nothing is lost.
      expect(delivered).toEqual(log.slice(log.indexOf(delivered[0]!)));
      expect(await truncatedPolls()).toBeGreaterThanOrEqual(1);
    }
  });

  it('a client deduping by activity_id gets every entry once across a relay restart', async () => {
    harness = await start(setup);
    const market = harness.sim.market.activeMarketIds()[0]!;
    const first = await subscribe(harness.relay, market);
    harness.sim.market.printTrades(market, 120);
    await caughtUp(first, market);
    await first.close();
    await harness.relay.close();

    // Fewer trades than a snapshot holds while no relay runs: the next snapshot still reaches back.
    harness.sim.market.printTrades(market, 30);
    const restarted = await startHarnessRelay(harness.sim, setup.relay);
    opened.push(restarted);
    const second = await subscribe(restarted, market);
    harness.sim.market.printTrades(market, 170);
    await caughtUp(second, market);

    // The dedupe contract of the SDK: remember delivered ids across connections and epochs.
    const seen = new RecentIds(TRADES_SEEN_IDS);
    const consumed: string[] = [];
    for (const messages of [tradeMessages(first, market), tradeMessages(second, market)])
      for (const id of idsOf(entriesOf(messages))) if (seen.add(id)) consumed.push(id);

    const log = upstreamIds(harness.sim, market);
    const firstSnapshot = idsOf(entriesOf(tradeMessages(first, market).slice(0, 1)));
    expect(consumed).toEqual(log.slice(log.indexOf(firstSnapshot[0]!)));
    // The new epoch's snapshot repeated entries the first relay had delivered: deduping was needed.
    const secondMessages = tradeMessages(second, market);
    expect(secondMessages[0]!.epoch).not.toBe(tradeMessages(first, market)[0]!.epoch);
    const repeated = idsOf(entriesOf(secondMessages.slice(0, 1))).filter((id) =>
      idsOf(entriesOf(tradeMessages(first, market))).includes(id),
    );
    expect(repeated.length).toBe(TRADES_SNAPSHOT_SIZE - 30);
  });
});
