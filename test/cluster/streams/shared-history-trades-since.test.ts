/**
 * `trades` `since` an `activity_id` on a relay that does not hold the stream's recording lease
 * (docs/cluster.md "One history for the cluster"; docs/protocol.md "Trades since a time or an
 * `activity_id`"): relay A's client holds the market's trades, so A holds the recording lease and
 * its record of the stream is in the PostgreSQL both relays share. Relay B, a newcomer, answers a
 * `since` of a trade in A's record from that record, reading upstream's activity pages only after
 * the record's newest trade: no page past the first (the named trade stands far beyond it, newest
 * first), and every trade after the named one once, in order, then live.
 */
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { streamKey } from '../../../packages/protocol/src/channels/stream-key.ts';
import type { TradeEntry } from '../../../packages/protocol/src/protocol/messages.ts';
import { recordingLeaseKey } from '../../../src/relay/coordination/redis/keys.ts';
import { upstreamListing } from '../../support/channels/trades.ts';
import type { ChildRelay } from '../../support/cluster/child-relay.ts';
import { redisAvailable } from '../../support/cluster/redis.ts';
import { useSharedHistory } from '../../support/cluster/shared-history.ts';
import { postgresAvailable } from '../../support/postgres-server.ts';
import { TextClient } from '../../support/replay-client.ts';
import { waitFor } from '../../support/wait-for.ts';

/** The activity ids of the trades messages of `market` a client received (of `id`'s answer, or live). */
function tradeIds(client: TextClient, market: string): string[] {
  return client
    .stream()
    .filter(({ message }) => message.channel === 'trades' && message.market === market)
    .flatMap(({ message }) =>
      (message.data as { trades: TradeEntry[] }).trades.map((trade) => trade.activity_id),
    );
}

/** The activity ids `relay` exports of the market's trades record. */
async function recordedIds(relay: ChildRelay, market: string): Promise<string[]> {
  const response = await fetch(
    `${relay.url}/v1/history/trades?market=${market}&from=${new Date(0).toISOString()}`,
  );
  if (response.status !== 200) throw new Error(`export answered ${response.status}`);
  return (await response.text())
    .split('\n')
    .filter((line) => line !== '')
    .flatMap((line) => (JSON.parse(line) as { data: { trades: TradeEntry[] } }).data.trades)
    .map((trade) => trade.activity_id);
}

describe.skipIf(!redisAvailable() || !postgresAvailable())(
  'one history for the cluster: trades since on a relay without the recording lease',
  () => {
    // No trades but the test's own: the listing's offsets are the test's to tell.
    const shared = useSharedHistory({ tradeFlow: () => undefined });
    const { relay, sockets } = shared;

    it('answers from the lease holder’s record, upstream read only after it', async () => {
      const { sim } = shared;
      const market = sim.market.activeMarketIds()[0]!;
      const inspector = new Redis(shared.redisUrl);
      sockets.push({ close: () => inspector.disconnect() });
      const leaseOf = async () => (await inspector.get(recordingLeaseKey(streamKey('trades', market)))) ?? '';

      const a = await relay();
      const viewerA = await TextClient.connect(a);
      sockets.push(viewerA);
      viewerA.send({ op: 'subscribe', channel: 'trades', markets: [market] });
      const instanceA = await a.instance();
      await waitFor('A to hold the recording lease of trades', async () => (await leaseOf()) === instanceA);
      await waitFor('A’s trades snapshot', () => tradeIds(viewerA, market).length > 0);
      // Three bursts A's client receives live, so A's record holds them.
      for (let round = 0; round < 3; round++) {
        sim.market.printTrades(market, 60);
        const newest = sim.market.market(market)!.trades.at(-1)!.id;
        await waitFor(`the live trade ${newest} at A`, () => tradeIds(viewerA, market).includes(newest));
      }
      const live = tradeIds(viewerA, market);
      await waitFor(
        'A’s record to hold its client’s last trade',
        async () => (await recordedIds(a, market)).includes(live.at(-1)!),
        { timeoutMs: 15_000 },
      );
      // A trade of the first burst: 150 or more stand after it, past the first page of 100.
      const named = sim.market.market(market)!.trades.at(-170)!.id;
      expect(await recordedIds(a, market)).toContain(named);

      const b = await relay();
      const logged = sim.requests.length;
      const reader = await TextClient.connect(b);
      sockets.push(reader);
      reader.send({ op: 'subscribe', id: 's1', channel: 'trades', markets: [market], since: named });
      expect(await reader.answer('subscribed', 's1', 15_000)).toMatchObject({ since: named });
      await waitFor('B’s since snapshot', () => tradeIds(reader, market).length > 0, { timeoutMs: 15_000 });
      const pages = sim.requests
        .slice(logged)
        .filter((entry) => entry.path === `/api/markets/${market}/activity`)
        .map((entry) => Number(entry.query.offset ?? 0));
      // Newest first, upstream's trades after the record's newest are on the first page.
      expect(pages.filter((offset) => offset > 0)).toEqual([]);
      expect(await leaseOf()).toBe(instanceA);

      sim.market.printTrades(market, 5);
      const newest = sim.market.market(market)!.trades.at(-1)!.id;
      await waitFor(`the live trade ${newest} at B`, () => tradeIds(reader, market).includes(newest));
      // What the client has, then upstream's listing, which holds all of it: the simulator's book
      // may fill another trade meanwhile, listed after the client's newest or not at all yet.
      const got = tradeIds(reader, market);
      const listing = (await upstreamListing(sim, market)).map((trade) => trade.activity_id);
      expect(got).toEqual(listing.slice(listing.indexOf(named) + 1, listing.indexOf(got.at(-1)!) + 1));
      expect(reader.of('error')).toEqual([]);
    });
  },
);
