/**
 * Cluster mode, `trades` and `orders`: two relays on one Redis and one upstream. Only the lease
 * holder reads the activity pages and the order book; clients of both relays get every trade once
 * and rebuild the same orders as upstream.
 */
import { describe, expect, it } from 'vitest';
import type {
  OrderEntry,
  OrdersData,
  OrdersUpdateData,
  TradeEntry,
} from '../../../packages/protocol/src/protocol/messages.ts';
import type { RedisBroker } from '../../../src/relay/coordination/redis/broker.ts';
import { bookTargetKey, streamTargetKey } from '../../../src/relay/coordination/redis/keys.ts';
import type { PollKind } from '../../../src/relay/events.ts';
import type { Relay } from '../../../src/relay-server.ts';
import { applyOrdersUpdate } from '../../support/channels/orders-state.ts';
import { ProtocolClient } from '../../support/clients/protocol-client.ts';
import { redisAvailable } from '../../support/cluster/redis.ts';
import { useRelayPair } from '../../support/cluster/relay-pair.ts';
import { upstreamBook } from '../../support/harness.ts';
import { waitFor } from '../../support/wait-for.ts';

function tradeIds(client: ProtocolClient, market: string): string[] {
  return client.messages
    .filter((message) => message.channel === 'trades' && message.market === market && 'data' in message)
    .flatMap((message) =>
      (message.data as { trades: TradeEntry[] }).trades.map((entry) => entry.activity_id),
    );
}

/** Orders by id, as snapshot + updates rebuild them. */
function ordersById(client: ProtocolClient, market: string): string {
  let state: OrdersData | undefined;
  for (const message of client.messages) {
    if (message.channel !== 'orders' || message.market !== market) continue;
    if (message.type === 'snapshot') state = message.data as OrdersData;
    else if (message.type === 'update' && state !== undefined)
      state = applyOrdersUpdate(state, message.data as OrdersUpdateData);
  }
  return state === undefined ? '' : keyed(state);
}

const keyed = (orders: { bids: readonly OrderEntry[]; asks: readonly OrderEntry[] }): string =>
  JSON.stringify(
    [
      ...orders.bids.map((order) => ['bid', order] as const),
      ...orders.asks.map((order) => ['ask', order] as const),
    ].sort(([, a], [, b]) => a.id.localeCompare(b.id)),
  );

describe.skipIf(!redisAvailable())('cluster mode over Redis: trades and orders', () => {
  const { start, clients, leasesSettled } = useRelayPair();

  /** Successful polls per kind, from the relay's own events (a test clears it to count afresh). */
  function countPolls(of: Relay): Map<PollKind, number> {
    const counts = new Map<PollKind, number>();
    of.events.on('poll:done', ({ kind, outcome }) => {
      if (outcome === 'ok') counts.set(kind, (counts.get(kind) ?? 0) + 1);
    });
    return counts;
  }

  it("polls activity and the book on one relay; clients of both get every trade once and upstream's orders", async () => {
    const { sim, relays: pair } = await start();
    const market = sim.market.activeMarketIds()[0]!;
    const polls = pair.map(countPolls);
    const viewers: ProtocolClient[] = [];
    for (const relay of pair) {
      const viewer = await ProtocolClient.connect(relay.url);
      clients.push(viewer);
      viewers.push(viewer);
      await viewer.request({ op: 'subscribe', channel: 'trades', markets: [market] });
      await viewer.request({ op: 'subscribe', channel: 'orders', markets: [market] });
    }
    await waitFor('snapshots on both relays', () =>
      viewers.every((viewer) => tradeIds(viewer, market).length > 0 && ordersById(viewer, market) !== ''),
    );
    const firstIds = viewers.map((viewer) => tradeIds(viewer, market)[0]!);
    // Until the two relays know each other, each may hold a lease for a while: count from then on.
    await leasesSettled(pair, [streamTargetKey('trades', market), bookTargetKey(market)]);
    for (const count of polls) count.clear();

    for (const burst of [180, 20, 120]) {
      sim.market.printTrades(market, burst);
      sim.tick();
      const newest = sim.market.market(market)!.trades.at(-1)!.id;
      const book = keyed(await upstreamBook(sim, market));
      for (const viewer of viewers) {
        await waitFor(`${newest} on both relays`, () => tradeIds(viewer, market).includes(newest));
        await waitFor('upstream orders on both relays', () => ordersById(viewer, market) === book);
      }
    }

    // The relay that does not poll the book told the one that does that it reads the book it shares:
    // shared at every poll, not now and then.
    const target = bookTargetKey(market);
    const sharesEachPoll = (relay: Relay): boolean => {
      const { shareDemand } = (relay.broker as RedisBroker).coordinator;
      const now = Date.now();
      return shareDemand.shareNow(target, now) && shareDemand.shareNow(target, now);
    };
    expect(pair.map(sharesEachPoll).filter(Boolean)).toHaveLength(1);

    const log = sim.market.market(market)!.trades.map((trade) => trade.id);
    viewers.forEach((viewer, i) => {
      expect(tradeIds(viewer, market), `relay ${i}`).toEqual(log.slice(log.indexOf(firstIds[i]!)));
      expect(viewer.of('error')).toEqual([]);
    });
    // One relay read upstream for both channels; the other applied what it shared.
    expect(Math.min(...polls.map((count) => count.get('trades') ?? 0))).toBe(0);
    expect(Math.max(...polls.map((count) => count.get('trades') ?? 0))).toBeGreaterThanOrEqual(3);
    expect(Math.min(...polls.map((count) => count.get('book') ?? 0))).toBe(0);
  });
  it('serves orders on the relay that follows the book, from the book its holder reads for numbered depths alone', async () => {
    const { sim, relays: pair } = await start();
    const market = sim.market.activeMarketIds()[0]!;
    const target = bookTargetKey(market);
    for (const relay of pair) {
      const viewer = await ProtocolClient.connect(relay.url);
      clients.push(viewer);
      await viewer.request({ op: 'subscribe', channel: 'book', markets: [market], depth: 10 });
    }
    await leasesSettled(pair, [target]);
    // The holder's clients want ten levels: it reads each body straight to levels, and shares the
    // book (parsed again from the body) once the follower asks for it.
    const holds = (relay: Relay) => (relay.broker as RedisBroker).coordinator.log.token(target) !== undefined;
    const follower = pair.find((relay) => !holds(relay))!;
    const viewer = await ProtocolClient.connect(follower.url);
    clients.push(viewer);
    await viewer.request({ op: 'subscribe', channel: 'orders', markets: [market] });
    for (let i = 0; i < 3; i += 1) {
      sim.tick();
      const book = keyed(await upstreamBook(sim, market));
      await waitFor('upstream orders on the follower', () => ordersById(viewer, market) === book);
    }
    expect(viewer.of('error')).toEqual([]);
  });
});
